// The provider plugin as Pulumi fetches it: one executable per platform,
// `pulumi-resource-dmarc` (`.exe` on Windows), that carries its runtime, in
// an archive named as Pulumi's downloader asks for it,
// `pulumi-resource-dmarc-v<version>-<os>-<arch>.tar.gz` (the executable at
// its root, with README.md and LICENSE), beside a list of the archives'
// SHA-256 sums, `pulumi-dmarc_<version>_checksums.txt`, in the `sha256sum`
// format, so `sha256sum --check --ignore-missing` verifies a download.
//
// The executable is a Node.js single executable application (sea.mjs) of
// the bundle (bundle.mjs). The `node` it carries is of the release's line
// (RELEASE_NODE_LINE, release.yml's NODE_VERSION), whatever node runs this
// script: for this machine's platform the running one when it is of that
// line (or --node <path>, of the same platform and line), else npm's package
// of that line; for another platform, npm's package of Node's binary at the
// same version (its blob is made by this machine's node of that version,
// and belongs to its version; scripts/toolchains/node-lines.mjs).
//
//   npm run plugin [-- <folder>]                      this machine's platform into .cache/plugin/ (or <folder>)
//   node scripts/plugin/index.mjs --platform darwin-arm64 [--node <path>] [--schema <file>] [--out <folder>]
//   node scripts/plugin/index.mjs --checksums <folder>     the list over the archives in <folder>
//
// The schema the executable serves names where its archives are published:
// --download-url or DMARC_PLUGIN_DOWNLOAD_URL (as for `npm run sdk`), else
// the schema's default. --schema <file> serves a schema written elsewhere
// instead: the release's runners build the executable from the tag's
// sdk/schema.json (which its SDK job checks is what the tag makes), so that
// they need no Go for the examples' generators. Each build is the artefact `plugin-executable` of its inputs
// (the bundle, the node binary, this room's scripts, the files beside the
// executable), so a second build of the same inputs (the next test file,
// the next run) finds it made. Run after `npm ci` and `tsc -b`.

import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { ensureArtefact, fileDigest } from "../build/artefact.mjs";
import { runProcess } from "../build/process.mjs";
import { isMain, pluginVersion, projectRoot } from "../project.mjs";
import { downloadUrlFromEnvironment, ensureSchema } from "../sdk/schema.mjs";
import { ensureNodeBinary, ensureNodeLine } from "../toolchains/node-lines.mjs";
import { bundlePlugin } from "./bundle.mjs";
import {
  archiveName,
  checksumsName,
  executableName,
  hostPlatform,
  PLATFORMS,
  RELEASE_NODE_LINE,
} from "./platforms.mjs";
import { makeExecutable } from "./sea.mjs";
import { tarGz } from "./tar.mjs";

/**
 * What a build of the plugin made: the archive, the executable in it, the version and the platform.
 * @typedef {{ archive: string, executable: string, version: string, platform: string }} BuiltPlugin
 */

/**
 * The platform (default: this machine's), the Node.js whose `node` it is made from, the address Pulumi
 * downloads it from (default: the release's), and a schema written elsewhere to serve instead of the build's.
 * @typedef {{ platform?: string, node?: string, downloadUrl?: string, schemaFile?: string }} PluginBuildOptions
 */

/** Beside the executable in every archive, as in Pulumi's own providers' archives. */
const EXTRAS = { "README.md": join(projectRoot, "README.md"), LICENSE: join(projectRoot, "provider", "LICENSE") };

const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

const lineOf = (version) => Number(version.replace(/^v/, "").split(".")[0]);

/** This machine's node of the release's line: --node, the running one when it is of that line, else npm's. */
async function releaseNode(node) {
  if (node) {
    const version = (await runProcess(node, ["--version"])).trim();
    if (lineOf(version) !== RELEASE_NODE_LINE) {
      throw new Error(`--node ${node} is Node.js ${version}; the release carries Node.js ${RELEASE_NODE_LINE}`);
    }
    return { node, version: version.replace(/^v/, "") };
  }
  if (lineOf(process.versions.node) === RELEASE_NODE_LINE)
    return { node: process.execPath, version: process.versions.node };
  const installed = await ensureNodeLine(RELEASE_NODE_LINE);
  return { node: installed.node, version: installed.version };
}

/** The `node` binary to carry, of `platform`, and the node of this machine that makes its blob (of its version). */
async function nodeBinaries(platform, node) {
  const spec = PLATFORMS[platform];
  const native = platform === hostPlatform();
  if (node && !native)
    throw new Error(`--node is for this machine's platform (${hostPlatform()}); ${platform}'s comes from npm`);
  if (!native && spec.os === "darwin") throw new Error(`${platform} is built on macOS, where codesign re-signs it`);
  const maker = await releaseNode(node);
  const carried = native ? maker.node : await ensureNodeBinary(spec.os, spec.cpu, maker.version);
  return { carried, maker: maker.node };
}

/** This room's scripts, as inputs of the executable they make. */
const scriptInputs = () =>
  Object.fromEntries(
    readdirSync(import.meta.dirname)
      .filter((name) => name.endsWith(".mjs"))
      .map((name) => [name, fileDigest(join(import.meta.dirname, name))]),
  );

/**
 * Builds (or finds the build of the same inputs) the executable and the
 * archive for `platform`; answers { archive, executable, version, platform }.
 * @param {PluginBuildOptions} [options]
 * @returns {Promise<BuiltPlugin>}
 */
export async function buildPlugin({ platform = hostPlatform(), node, downloadUrl, schemaFile } = {}) {
  if (!PLATFORMS[platform]) {
    throw new Error(`no plugin executable for "${platform}": the platforms are ${Object.keys(PLATFORMS).join(", ")}`);
  }
  const version = pluginVersion();
  const nodes = await nodeBinaries(platform, node);
  const schemaText = schemaFile
    ? readFileSync(schemaFile, "utf8")
    : (await ensureSchema(downloadUrl ?? downloadUrlFromEnvironment())).text;
  const code = await bundlePlugin(schemaText);
  const inputs = {
    platform,
    code: sha256(code),
    node: fileDigest(nodes.carried),
    scripts: scriptInputs(),
    extras: Object.fromEntries(Object.entries(EXTRAS).map(([name, file]) => [name, fileDigest(file)])),
  };
  const { folder } = await ensureArtefact("plugin-executable", inputs, async (work, scratch) => {
    const bundleFile = join(scratch, "main.cjs");
    writeFileSync(bundleFile, code);
    const executable = join(work, executableName(platform));
    await makeExecutable(platform, nodes, bundleFile, scratch, executable);
    const entries = [
      { name: executableName(platform), content: readFileSync(executable), mode: 0o755 },
      ...Object.entries(EXTRAS).map(([name, file]) => ({ name, content: readFileSync(file), mode: 0o644 })),
    ];
    writeFileSync(join(work, archiveName(platform, version)), tarGz(entries));
    writeFileSync(join(work, "schema.json"), schemaText);
    return { platform, version };
  });
  return {
    archive: join(folder, archiveName(platform, version)),
    executable: join(folder, executableName(platform)),
    version,
    platform,
  };
}

/**
 * Writes `folder`'s SHA-256 list over every archive of `version` in it; answers its path.
 * @param {string} folder
 * @param {string} [version]
 * @returns {string}
 */
export function writeChecksums(folder, version = pluginVersion()) {
  const archives = readdirSync(folder)
    .filter((name) => name.startsWith(`pulumi-resource-dmarc-v${version}-`) && name.endsWith(".tar.gz"))
    .sort();
  const lines = archives.map((name) => `${sha256(readFileSync(join(folder, name)))}  ${name}\n`);
  const list = join(folder, checksumsName(version));
  writeFileSync(list, lines.join(""));
  return list;
}

/**
 * Builds `platform`'s archive into `folder` and rewrites the folder's SHA-256 list; answers both paths.
 * @param {string} folder
 * @param {PluginBuildOptions} [options]
 * @returns {Promise<BuiltPlugin & { checksums: string }>}
 */
export async function writePluginArchive(folder, options = {}) {
  const built = await buildPlugin(options);
  mkdirSync(folder, { recursive: true });
  const archive = resolve(folder, archiveName(built.platform, built.version));
  copyFileSync(built.archive, archive);
  return { ...built, archive, checksums: writeChecksums(folder, built.version) };
}

if (isMain(import.meta.url)) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      platform: { type: "string" },
      node: { type: "string" },
      out: { type: "string" },
      "download-url": { type: "string" },
      schema: { type: "string" },
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
      schemaFile: values.schema,
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
