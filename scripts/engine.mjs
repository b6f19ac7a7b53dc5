// Provisions the Pulumi engine for every command that needs it, with no
// network access beyond the Go module proxy and nothing written outside the
// project folder (npm's and Go's own caches excepted).
//
// Order: a `pulumi` on PATH at least as new as the repository's pinned
// @pulumi/pulumi (root package.json) is used as it is, with the plugins its
// install brings; otherwise the CLI is built once from its Go module into
// .engine/<version>/ and reused on later runs. Next to it go the two plugins
// an official install ships beside `pulumi`: the Node.js language host
// `pulumi-language-nodejs`, which `pulumi up` on a folder with a Pulumi.yaml
// needs (inline Automation API programs do not), the official one when the
// module proxy serves it, else this project's own from scripts/language-host/;
// and the dynamic provider plugin `pulumi-resource-pulumi-nodejs`. The engine
// looks for both next to its own executable, and warns ("using ... from
// $PATH") when the copy it finds on PATH is not that one.
//
// Dependency-free on purpose: it runs before `npm ci` has finished on a fresh
// clone only through scripts/run.mjs, which installs first, but it must never
// need anything from node_modules to build the engine.

import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { delimiter, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const projectRoot = resolve(fileURLToPath(new URL("..", import.meta.url)));

const engineCache = join(projectRoot, ".engine");
const languageHostSource = join(projectRoot, "scripts", "language-host");
const officialLanguageHost = "github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3";
const sdkModule = "github.com/pulumi/pulumi/sdk/v3";

// The passphrase only protects stacks in the project-local file backend used
// by tests, the demo and the benchmark; a real stack brings its own.
const localPassphrase = "dmarc-partner-local";

// The package itself only names a peer range of @pulumi/pulumi; the
// repository pins the exact version it builds, tests and locks.
export function pinnedPulumiVersion() {
  const manifest = JSON.parse(readFileSync(join(projectRoot, "package.json"), "utf8"));
  const version = manifest.devDependencies?.["@pulumi/pulumi"];
  if (!/^\d+\.\d+\.\d+$/.test(version ?? "")) {
    throw new Error(`package.json must pin @pulumi/pulumi exactly in devDependencies (found "${version}")`);
  }
  return version;
}

function compareVersions(a, b) {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < 3; i++) {
    if (pa[i] !== pb[i]) return pa[i] - pb[i];
  }
  return 0;
}

function pulumiOnPath() {
  const probe = spawnSync("pulumi", ["version"], {
    encoding: "utf8",
    env: { ...process.env, PULUMI_SKIP_UPDATE_CHECK: "true" },
  });
  if (probe.status !== 0) return undefined;
  const match = /v?(\d+\.\d+\.\d+)/.exec(probe.stdout);
  return match ? match[1] : undefined;
}

function engineDir(version) {
  return join(engineCache, `v${version}`);
}

function stampPath(version) {
  return join(engineDir(version), "stamp.json");
}

function readStamp(version) {
  try {
    const stamp = JSON.parse(readFileSync(stampPath(version), "utf8"));
    return stamp.version === version && existsSync(join(engineDir(version), "bin", "pulumi")) ? stamp : undefined;
  } catch {
    return undefined;
  }
}

function writeStamp(version, stamp) {
  writeFileSync(stampPath(version), `${JSON.stringify(stamp, null, 2)}\n`);
}

function languageHostFiles() {
  return readdirSync(languageHostSource).filter((name) => /\.go$|^go\.(mod|sum)$/.test(name));
}

// Our language host is rebuilt when its sources change; the official one only
// with the version.
function languageHostDigest() {
  const hash = createHash("sha256");
  for (const name of languageHostFiles().sort())
    hash.update(`${name}\0`).update(readFileSync(join(languageHostSource, name)));
  return hash.digest("hex").slice(0, 16);
}

function languageHostCurrent(stamp, version) {
  const host = stamp.languageHost;
  if (!host || !existsSync(join(engineDir(version), "bin", "pulumi-language-nodejs"))) return false;
  return host.source === "official" || host.digest === languageHostDigest();
}

function goAvailable() {
  return spawnSync("go", ["version"], { encoding: "utf8" }).status === 0;
}

function requireGo(version) {
  if (goAvailable()) return;
  throw new Error(
    [
      `The Pulumi CLI ${version} or newer is not on PATH, and Go is not installed to build it.`,
      "Either install the Pulumi CLI (https://www.pulumi.com/docs/install/),",
      "or install Go 1.25+ (https://go.dev/dl/) and run this command again: it builds the engine and its",
      "Node.js language host once into .engine/.",
    ].join("\n"),
  );
}

function runStep(label, command, args, options) {
  return new Promise((resolvePromise, reject) => {
    const started = Date.now();
    const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
    let downloads = 0;
    let packages = 0;
    let tail = "";
    const onData = (chunk) => {
      const text = chunk.toString();
      tail = (tail + text).slice(-4000);
      downloads += (text.match(/go: downloading /g) ?? []).length;
      packages += text.split("\n").filter((line) => line && !line.startsWith("go: ")).length;
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    const heartbeat = setInterval(() => {
      const seconds = Math.round((Date.now() - started) / 1000);
      process.stderr.write(
        `[engine]   ${label}: ${seconds}s, ${downloads} modules downloaded, ${packages} packages built\n`,
      );
    }, 15000);
    child.on("error", (error) => {
      clearInterval(heartbeat);
      reject(error);
    });
    child.on("close", (code) => {
      clearInterval(heartbeat);
      if (code === 0) resolvePromise(tail);
      else reject(new Error(`${label} failed (exit ${code}):\n${tail}`));
    });
  });
}

function goEnv() {
  return {
    ...process.env,
    // Never fetch a different Go toolchain: only the module proxy is reachable.
    GOTOOLCHAIN: "local",
    GOFLAGS: "-mod=mod -buildvcs=false",
  };
}

// The engine's modules carry `replace` directives, which `go install
// module@version` refuses; a throwaway module that requires them and repeats
// their non-local replacements builds them instead.
async function nonLocalReplaces(modulePath, version, env) {
  const probe = spawnSync("go", ["mod", "download", "-json", `${modulePath}@v${version}`], {
    encoding: "utf8",
    env,
  });
  const info = JSON.parse(probe.stdout || "{}");
  if (probe.status !== 0 || !info.GoMod) {
    throw new Error(`cannot download ${modulePath}@v${version}: ${info.Error ?? probe.stderr.trim()}`);
  }
  const goMod = readFileSync(info.GoMod, "utf8");
  const replaces = [];
  for (const match of goMod.matchAll(/^replace\s+(\S+)(?:\s+\S+)?\s+=>\s+(\S+)(?:\s+(\S+))?\s*$/gm)) {
    const [, from, target, targetVersion] = match;
    if (target.startsWith(".") || target.startsWith("/")) continue;
    replaces.push(`replace ${from} => ${target} ${targetVersion ?? ""}`.trim());
  }
  return replaces;
}

async function buildEngine(version) {
  requireGo(version);
  const env = goEnv();
  const dir = engineDir(version);
  const work = join(dir, "build");
  rmSync(work, { recursive: true, force: true });
  mkdirSync(join(dir, "bin"), { recursive: true });
  mkdirSync(work, { recursive: true });

  const engineModule = "github.com/pulumi/pulumi/pkg/v3";
  process.stderr.write(`[engine] building Pulumi ${version} from Go modules (first run only; several minutes)\n`);
  const replaces = await nonLocalReplaces(engineModule, version, env);
  writeFileSync(
    join(work, "go.mod"),
    [
      "module dmarc-partner/engine-build",
      "",
      "go 1.25",
      "",
      `require (\n\t${engineModule} v${version}\n\t${sdkModule} v${version}\n)`,
      "",
      ...replaces,
      "",
    ].join("\n"),
  );
  writeFileSync(join(work, "tools.go"), `//go:build tools\n\npackage tools\n\nimport _ "${engineModule}/cmd/pulumi"\n`);

  const ldflags = `-s -w -X ${sdkModule}/go/common/version.Version=v${version}`;
  await runStep("resolving modules", "go", ["get", `${engineModule}/cmd/pulumi@v${version}`], { cwd: work, env });
  const output = join(dir, "bin", "pulumi.partial");
  await runStep(
    "compiling pulumi",
    "go",
    ["build", "-v", "-trimpath", "-ldflags", ldflags, "-o", output, `${engineModule}/cmd/pulumi`],
    {
      cwd: work,
      env,
    },
  );
  renameSync(output, join(dir, "bin", "pulumi"));
  rmSync(work, { recursive: true, force: true });
  // Stamped before the language host is built: if that fails, the next run
  // builds only the host.
  writeStamp(version, { version, builtAt: new Date().toISOString() });
  process.stderr.write(`[engine] built Pulumi ${version} into ${join(dir, "bin")}\n`);
  await buildLanguageHost(version);
}

// Prepares a throwaway module that builds the official host, as for the CLI.
// Returns false, saying why, when the module proxy does not serve it (for
// v3.246.0: "403 Forbidden: This module version is not available.").
async function prepareOfficialLanguageHost(version, work, env) {
  try {
    const replaces = await nonLocalReplaces(officialLanguageHost, version, env);
    writeFileSync(
      join(work, "go.mod"),
      [
        "module dmarc-partner/language-host-build",
        "",
        "go 1.25",
        "",
        `require (\n\t${officialLanguageHost} v${version}\n\t${sdkModule} v${version}\n)`,
        "",
        ...replaces,
        "",
      ].join("\n"),
    );
    writeFileSync(join(work, "tools.go"), `//go:build tools\n\npackage tools\n\nimport _ "${officialLanguageHost}"\n`);
    await runStep("resolving modules", "go", ["get", `${officialLanguageHost}@v${version}`], { cwd: work, env });
    return true;
  } catch (error) {
    const status = /\b\d{3} [A-Z][A-Za-z ]*/.exec(error.message)?.[0];
    const response = /server response: (.*)/.exec(error.message)?.[1];
    const reason = [status, response].filter(Boolean).join(": ") || error.message.split("\n")[0];
    process.stderr.write(`[engine] the official Node.js language host ${version} is not available (${reason})\n`);
    return false;
  }
}

// Our own host is built from a copy, so that builds never write into
// scripts/, and `go get` moves its SDK to the pinned version should the pin
// change.
async function prepareOwnLanguageHost(version, work, env) {
  process.stderr.write("[engine] building this project's own Node.js language host from scripts/language-host/\n");
  for (const name of languageHostFiles()) copyFileSync(join(languageHostSource, name), join(work, name));
  await runStep("resolving modules", "go", ["get", `${sdkModule}@v${version}`], { cwd: work, env });
}

async function buildLanguageHost(version) {
  requireGo(version);
  const env = goEnv();
  const dir = engineDir(version);
  const started = Date.now();
  // Work folder and partial binary per process: two commands provisioning at
  // once do not clobber each other, and the last rename wins with an
  // equivalent binary.
  const work = join(dir, `build-language-host-${process.pid}`);
  const output = join(dir, "bin", `pulumi-language-nodejs.${process.pid}.partial`);
  mkdirSync(join(dir, "bin"), { recursive: true });

  process.stderr.write(`[engine] building the Node.js language host for Pulumi ${version}\n`);
  let languageHost;
  let ldflags;
  let target;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  if (await prepareOfficialLanguageHost(version, work, env)) {
    languageHost = { source: "official" };
    ldflags = `-s -w -X ${sdkModule}/go/common/version.Version=v${version}`;
    target = officialLanguageHost;
  } else {
    rmSync(work, { recursive: true, force: true });
    mkdirSync(work, { recursive: true });
    await prepareOwnLanguageHost(version, work, env);
    languageHost = { source: "scripts/language-host", digest: languageHostDigest() };
    ldflags = `-s -w -X main.version=v${version}`;
    target = ".";
  }
  const build = ["build", "-v", "-trimpath", "-ldflags", ldflags, "-o", output, target];
  await runStep("compiling pulumi-language-nodejs", "go", build, { cwd: work, env });
  renameSync(output, join(dir, "bin", "pulumi-language-nodejs"));
  rmSync(work, { recursive: true, force: true });
  writeStamp(version, { ...readStamp(version), languageHost: { ...languageHost, builtAt: new Date().toISOString() } });
  const seconds = Math.round((Date.now() - started) / 1000);
  process.stderr.write(`[engine] built the Node.js language host (${languageHost.source}) in ${seconds}s\n`);
}

// What an official install ships as pulumi-resource-pulumi-nodejs: it runs the
// dynamic provider of the @pulumi/pulumi that Node resolves from the working
// directory, which the engine sets to the program's, so the provider and the
// program share one SDK.
const dynamicProviderPluginScript = `#!/bin/sh
script=$(node -e 'process.stdout.write(require.resolve("@pulumi/pulumi/cmd/dynamic-provider"))') || exit 1
exec node "$script" "$@"
`;

// Written, not built: cheap enough to check on every run, and per process
// then renamed so that two commands provisioning at once never see half a file.
function installDynamicProviderPlugin(version) {
  const target = join(engineDir(version), "bin", "pulumi-resource-pulumi-nodejs");
  try {
    if (readFileSync(target, "utf8") === dynamicProviderPluginScript) return;
  } catch {}
  const partial = `${target}.${process.pid}.partial`;
  writeFileSync(partial, dynamicProviderPluginScript, { mode: 0o755 });
  renameSync(partial, target);
}

/**
 * Makes sure an engine is available and returns the environment every engine
 * run must use: PATH with the engine and the dynamic provider plugin, a file
 * backend, a passphrase, and a project-local PULUMI_HOME.
 */
export async function ensureEngine() {
  const version = pinnedPulumiVersion();
  const pathEntries = [];

  const onPath = pulumiOnPath();
  let source;
  if (onPath && compareVersions(onPath, version) >= 0) {
    source = `pulumi ${onPath} on PATH`;
  } else {
    const stamp = readStamp(version);
    if (!stamp) await buildEngine(version);
    else if (!languageHostCurrent(stamp, version)) await buildLanguageHost(version);
    installDynamicProviderPlugin(version);
    pathEntries.push(join(engineDir(version), "bin"));
    source = `pulumi ${version} built into .engine/`;
  }

  const stateDir = join(projectRoot, ".pulumi-state");
  const homeDir = join(projectRoot, ".pulumi-home");
  mkdirSync(stateDir, { recursive: true });
  mkdirSync(homeDir, { recursive: true });
  const env = {
    PATH: [...pathEntries, process.env.PATH ?? ""].join(delimiter),
    PULUMI_HOME: homeDir,
    PULUMI_BACKEND_URL: process.env.PULUMI_BACKEND_URL ?? `file://${stateDir}`,
    PULUMI_CONFIG_PASSPHRASE: process.env.PULUMI_CONFIG_PASSPHRASE ?? localPassphrase,
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
  };
  return { version, source, env };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { source, env } = await ensureEngine();
  process.stdout.write(
    `${source}\n${Object.entries(env)
      .map(([k, v]) => `${k}=${v}`)
      .join("\n")}\n`,
  );
}
