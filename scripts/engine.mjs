// Provisions the Pulumi engine for every command that needs it, with no
// network access beyond the Go module proxy and nothing written outside the
// project folder (npm's and Go's own caches excepted).
//
// Order: a `pulumi` on PATH at least as new as the repository's pinned
// @pulumi/pulumi (root package.json) is used as it is, with the plugins its
// install brings; otherwise the CLI is built once from its Go module into
// .engine/<version>/ and reused on later runs. Next to it go the plugins an
// official install ships beside `pulumi`: the Node.js language host
// `pulumi-language-nodejs`, which `pulumi up` on a folder with a Pulumi.yaml
// needs (inline Automation API programs do not), the official one when the
// module proxy serves it, else this project's own from scripts/language-host/
// (its nodejs/ command); the Go and Python language hosts `pulumi-language-go`
// and `pulumi-language-python` likewise, else ours from the same module's
// golang/ and python/ commands; the YAML language host `pulumi-language-yaml`,
// for Pulumi YAML programs; and the dynamic provider plugin
// `pulumi-resource-pulumi-nodejs`. The engine looks for them next to its own
// executable, and warns ("using ... from $PATH") when the copy it finds on
// PATH is not that one.
//
// The SDK generator (scripts/sdk-gen/) is built into the same folder on
// demand, by ensureSdkGenerator(): only what writes the SDKs needs it; the
// program generator (scripts/program-gen/), which writes the reference pages'
// examples, likewise by ensureProgramGenerator().
//
// Dependency-free on purpose: it runs before `npm ci` has finished on a fresh
// clone only through scripts/run.mjs, which installs first, but it must never
// need anything from node_modules to build the engine.

import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { delimiter, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const projectRoot = resolve(fileURLToPath(new URL("..", import.meta.url)));

const engineCache = join(projectRoot, ".engine");
const languageHostSource = join(projectRoot, "scripts", "language-host");
const sdkGeneratorSource = join(projectRoot, "scripts", "sdk-gen");
const programGeneratorSource = join(projectRoot, "scripts", "program-gen");
const officialLanguageHost = "github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3";
const officialGoLanguageHost = "github.com/pulumi/pulumi/sdk/go/pulumi-language-go/v3";
const officialPythonLanguageHost = "github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3";
const engineModule = "github.com/pulumi/pulumi/pkg/v3";
const sdkModule = "github.com/pulumi/pulumi/sdk/v3";
const yamlModule = "github.com/pulumi/pulumi-yaml";
const yamlLanguageHost = `${yamlModule}/cmd/pulumi-language-yaml`;

// pulumi-yaml is versioned apart from the engine. 1.25.0 requires pkg/v3 and
// sdk/v3 3.206.0 and is built with those: pinned to the engine's 3.246.0 it
// does not compile (plugin.NewContextWithRoot gained parameters), and as a
// process of its own it speaks to the engine through the language runtime's
// gRPC protocol, which both releases share (test/engine/yaml.test.ts runs a
// YAML program through it).
const yamlVersion = "1.25.0";
const yamlPulumiVersion = "3.206.0";

// .NET's code generator left pkg/v3 for pulumi-dotnet's module, which the
// module proxy does not serve; 3.225.1 is the last pkg/v3 the proxy serves
// that still has it, frozen as it was moved. The other languages' generators
// are the engine's own version.
const dotnetCodegenVersion = "3.225.1";

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

// The stamp records what was built into the folder, an entry per binary.
function readStampFile(version) {
  try {
    return JSON.parse(readFileSync(stampPath(version), "utf8"));
  } catch {
    return {};
  }
}

function readStamp(version) {
  const stamp = readStampFile(version);
  const current = stamp.version === version && stamp.recipe === engineBuildRecipe;
  return current && existsSync(join(engineDir(version), "bin", "pulumi")) ? stamp : undefined;
}

// Merged into what the file holds just now and renamed into place, so that
// a command reading the stamp while another writes it never sees half of it.
function updateStamp(version, entries) {
  const partial = `${stampPath(version)}.${process.pid}.partial`;
  writeFileSync(partial, `${JSON.stringify({ ...readStampFile(version), ...entries }, null, 2)}\n`);
  renameSync(partial, stampPath(version));
}

// The files, relative to the Go module in `folder`, that a program of it is
// built from: go.mod and go.sum, and the sources below `packages` (all of
// the module by default). Python files are embedded in the Python language host.
function sourceFiles(folder, packages = ["."]) {
  const sources = packages.flatMap((pkg) =>
    readdirSync(join(folder, pkg), { recursive: true })
      .map((name) => join(pkg, name))
      .filter((path) => /\.(go|py)$/.test(path)),
  );
  return ["go.mod", "go.sum", ...sources].sort();
}

// Our own Go programs are rebuilt when the sources they are built from change.
function sourceDigest(folder, packages) {
  const hash = createHash("sha256");
  for (const path of sourceFiles(folder, packages)) hash.update(`${path}\0`).update(readFileSync(join(folder, path)));
  return hash.digest("hex").slice(0, 16);
}

function goAvailable() {
  return spawnSync("go", ["version"], { encoding: "utf8" }).status === 0;
}

function requireGo(version, part) {
  if (goAvailable()) return;
  if (part?.languages) {
    throw new Error(`Go 1.25+ (https://go.dev/dl/) is needed to build ${part.description} into .engine/ once.`);
  }
  throw new Error(
    [
      `The Pulumi CLI ${version} or newer is not on PATH, and Go is not installed to build it.`,
      "Either install the Pulumi CLI (https://www.pulumi.com/docs/install/),",
      "or install Go 1.25+ (https://go.dev/dl/) and run this command again: it builds the engine and its",
      "language hosts once into .engine/.",
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

// A throwaway module that requires `requires` ("module version" lines) and
// repeats `replaces`; its tools.go keeps `target` in the build list.
function writeBuildModule(work, name, requires, replaces, target) {
  writeFileSync(
    join(work, "go.mod"),
    [
      `module dmarc-partner/${name}`,
      "",
      "go 1.25",
      "",
      `require (\n${requires.map((line) => `\t${line}`).join("\n")}\n)`,
      "",
      ...replaces,
      "",
    ].join("\n"),
  );
  writeFileSync(join(work, "tools.go"), `//go:build tools\n\npackage tools\n\nimport _ "${target}"\n`);
}

// The CLI reads zxcvbn's word lists (two copies: Pulumi's `config set` and ESC's `env set`) on every start,
// to judge whether a plain config value looks like a secret: 90 of 145 ms of CPU for `pulumi version` here, on
// every one of the many CLI starts of a test run. Built from copies of the two modules that read them when a
// value is first judged, the CLI answers `config set` as before (test/engine/smoke.test.ts). Each edit must
// match once; a module whose text has changed is built as it is, with a warning.
const LAZY_WORD_LISTS = [
  [
    "frequency/frequency.go",
    "func init() {",
    "func Load() { loadOnce.Do(load) }\n\nvar loadOnce sync.Once\n\nfunc load() {",
  ],
  ["frequency/frequency.go", "import (\n", 'import (\n\t"sync"\n'],
  ["matching/matching.go", "func init() {\n\tloadFrequencyList()\n}\n", ""],
  ["matching/matching.go", "func loadFrequencyList() {\n", "func loadFrequencyList() {\n\tfrequency.Load()\n"],
];
const lazyWordListModules = ["github.com/nbutton23/zxcvbn-go", "github.com/ccojocar/zxcvbn-go"];
const engineBuildRecipe = createHash("sha256")
  .update(JSON.stringify([LAZY_WORD_LISTS, lazyWordListModules]))
  .digest("hex")
  .slice(0, 16);

// Copies `module` (as the build list has it) into the build folder with LAZY_WORD_LISTS applied and points the
// build at the copy; leaves the build as it is when the module is not in it or its text has changed.
function replaceWithLazyCopy(work, module, env) {
  const listed = spawnSync("go", ["list", "-m", "-json", module], { cwd: work, encoding: "utf8", env });
  const { Dir: source } = JSON.parse(listed.status === 0 ? listed.stdout : "{}");
  if (!source) return;
  const folder = join("lazy", module.replaceAll("/", "_"));
  const copy = join(work, folder);
  cpSync(source, copy, { recursive: true });
  // Writable, as the module cache's files are not, so that the build folder can be edited and removed.
  for (const name of ["", ...readdirSync(copy, { recursive: true })]) {
    const path = join(copy, name);
    chmodSync(path, statSync(path).isDirectory() ? 0o755 : 0o644);
  }
  for (const [file, from, to] of LAZY_WORD_LISTS) {
    const path = join(copy, file);
    const text = readFileSync(path, "utf8");
    if (text.split(from).length !== 2) {
      process.stderr.write(`[engine] ${module}: ${file} has changed; its word lists stay read on every start\n`);
      return;
    }
    writeFileSync(path, text.replace(from, to));
  }
  if (!existsSync(join(copy, "go.mod"))) writeFileSync(join(copy, "go.mod"), `module ${module}\n\ngo 1.12\n`);
  const edit = spawnSync("go", ["mod", "edit", `-replace=${module}=./${folder}`], { cwd: work, env, encoding: "utf8" });
  if (edit.status !== 0) throw new Error(`go mod edit -replace=${module} failed: ${edit.stderr.trim()}`);
}

async function buildEngine(version) {
  requireGo(version);
  const env = goEnv();
  const dir = engineDir(version);
  const work = join(dir, "build");
  rmSync(work, { recursive: true, force: true });
  mkdirSync(join(dir, "bin"), { recursive: true });
  mkdirSync(work, { recursive: true });

  process.stderr.write(`[engine] building Pulumi ${version} from Go modules (first run only; several minutes)\n`);
  const replaces = await nonLocalReplaces(engineModule, version, env);
  const requires = [`${engineModule} v${version}`, `${sdkModule} v${version}`];
  writeBuildModule(work, "engine-build", requires, replaces, `${engineModule}/cmd/pulumi`);

  const ldflags = `-s -w -X ${sdkModule}/go/common/version.Version=v${version}`;
  await runStep("resolving modules", "go", ["get", `${engineModule}/cmd/pulumi@v${version}`], { cwd: work, env });
  for (const module of lazyWordListModules) replaceWithLazyCopy(work, module, env);
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
  // Stamped before the plugins are built: if one fails, the next run builds
  // only what is missing.
  updateStamp(version, { version, recipe: engineBuildRecipe, builtAt: new Date().toISOString() });
  process.stderr.write(`[engine] built Pulumi ${version} into ${join(dir, "bin")}\n`);
}

// Prepares a throwaway module that builds the official host `module`, as for
// the CLI. Returns false, saying why, when the module proxy does not serve it
// (for v3.246.0: "403 Forbidden: This module version is not available.").
async function prepareOfficialLanguageHost(module, language, version, work, env) {
  try {
    const replaces = await nonLocalReplaces(module, version, env);
    const requires = [`${module} v${version}`, `${sdkModule} v${version}`];
    writeBuildModule(work, "language-host-build", requires, replaces, module);
    await runStep("resolving modules", "go", ["get", `${module}@v${version}`], { cwd: work, env });
    return true;
  } catch (error) {
    const status = /\b\d{3} [A-Z][A-Za-z ]*/.exec(error.message)?.[0];
    const response = /server response: (.*)/.exec(error.message)?.[1];
    const reason = [status, response].filter(Boolean).join(": ") || error.message.split("\n")[0];
    process.stderr.write(`[engine] the official ${language} language host ${version} is not available (${reason})\n`);
    return false;
  }
}

// Our own programs are built from a copy, so that builds never write into
// scripts/, and `go get` moves their Pulumi modules to the wanted version
// should it change.
async function prepareOwnProgram(folder, modules, work, env) {
  for (const path of sourceFiles(folder)) {
    mkdirSync(dirname(join(work, path)), { recursive: true });
    copyFileSync(join(folder, path), join(work, path));
  }
  await runStep("resolving modules", "go", ["get", ...modules], { cwd: work, env });
}

function emptyFolder(folder) {
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(folder, { recursive: true });
}

// Builds one binary of `part` (below) into bin/: `part.prepare` fills the
// work folder and says what to build, and the stamp records it under
// `part.key`. Work folder and partial binary per process: two commands
// provisioning at once do not clobber each other, and the last rename wins
// with an equivalent binary.
async function buildPart(version, part) {
  requireGo(version, part);
  const env = goEnv();
  const dir = engineDir(version);
  const started = Date.now();
  const work = join(dir, `build-${part.binary}-${process.pid}`);
  const output = join(dir, "bin", `${part.binary}.${process.pid}.partial`);
  mkdirSync(join(dir, "bin"), { recursive: true });
  emptyFolder(work);
  process.stderr.write(`[engine] building ${part.description} for Pulumi ${version}\n`);
  const { record, ldflags, target, flags = [] } = await part.prepare(version, work, env);
  const build = ["build", "-v", "-trimpath", ...flags, "-ldflags", ldflags, "-o", output, target];
  await runStep(`compiling ${part.binary}`, "go", build, { cwd: work, env });
  renameSync(output, join(dir, "bin", part.binary));
  rmSync(work, { recursive: true, force: true });
  updateStamp(version, { [part.key]: { ...record, builtAt: new Date().toISOString() } });
  const seconds = Math.round((Date.now() - started) / 1000);
  process.stderr.write(`[engine] built ${part.description} (${record.source}) in ${seconds}s\n`);
}

// Each of our own language hosts is a command of the module in
// languageHostSource, built from its own folder and the shared host/.
const languageHostPackages = (command) => ["host", command];

// The official host `module` of `language` when the module proxy serves it,
// else this project's own, the command in languageHostSource's folder `command`.
function languageHostPreparer(language, module, command) {
  const folder = relative(projectRoot, join(languageHostSource, command));
  return async (version, work, env) => {
    if (await prepareOfficialLanguageHost(module, language, version, work, env)) {
      const ldflags = `-s -w -X ${sdkModule}/go/common/version.Version=v${version}`;
      return { record: { source: "official" }, ldflags, target: module };
    }
    emptyFolder(work);
    process.stderr.write(`[engine] building this project's own ${language} language host from ${folder}/\n`);
    await prepareOwnProgram(languageHostSource, [`${sdkModule}@v${version}`], work, env);
    const record = { source: folder, digest: sourceDigest(languageHostSource, languageHostPackages(command)) };
    const ldflags = `-s -w -X dmarc-partner/language-host/host.version=v${version}`;
    return { record, ldflags, target: `./${command}` };
  };
}

// Built with the Pulumi modules its own go.mod requires (see yamlVersion).
async function prepareYamlLanguageHost(_version, work, env) {
  const replaces = await nonLocalReplaces(yamlModule, yamlVersion, env);
  writeBuildModule(work, "language-yaml-build", [`${yamlModule} v${yamlVersion}`], replaces, yamlLanguageHost);
  await runStep("resolving modules", "go", ["get", `${yamlLanguageHost}@v${yamlVersion}`], { cwd: work, env });
  const ldflags = `-s -w -X ${yamlModule}/pkg/version.Version=v${yamlVersion}`;
  return { record: { source: `${yamlModule} v${yamlVersion}` }, ldflags, target: yamlLanguageHost };
}

// Each generator's two builds share its sources (`folder`): the default one
// with the engine's pkg/v3, the .NET one (`-tags dotnet`) with the last
// pkg/v3 that has .NET's generators.
function codeGeneratorPreparer(folder, codegenVersion, flags, otherModules = []) {
  return async (version, work, env) => {
    const pulumiVersion = codegenVersion ?? version;
    const modules = [`${engineModule}@v${pulumiVersion}`, `${sdkModule}@v${pulumiVersion}`, ...otherModules];
    await prepareOwnProgram(folder, modules, work, env);
    const record = {
      source: `${relative(projectRoot, folder)} with pkg/v3 v${pulumiVersion}`,
      digest: sourceDigest(folder),
    };
    return { record, ldflags: "-s -w", target: ".", flags };
  };
}

/**
 * What @pulumi/pulumi loads on start only for serializing a program's functions (TypeScript's compiler, npm's
 * dependency tree), which a provider process never does: left out of the plugin's bundle and of this engine's
 * dynamic provider.
 */
export const FUNCTION_SERIALIZATION_MODULES = ["typescript", "@npmcli/arborist"];

/** A JavaScript expression standing in for `request`: any use throws, saying that `carrier` does not carry it. */
export function standInFor(request, carrier) {
  const message = `${carrier} does not carry ${request}, which only serializing a function needs`;
  return `new Proxy({}, {
  get(_, key) {
    if (typeof key === "symbol" || key === "__esModule") return undefined;
    throw new Error(${JSON.stringify(message)});
  },
})`;
}

// Beside the dynamic provider plugin, what it loads first (below).
const DYNAMIC_PROVIDER_PRELOAD = "pulumi-resource-pulumi-nodejs.preload.cjs";

// What an official install ships as pulumi-resource-pulumi-nodejs: it runs the
// dynamic provider of the @pulumi/pulumi found from the working directory,
// which the engine sets to the program's, so the provider and the program
// share one SDK. Found by the shell, as Node looks for node_modules folders
// upwards (Node itself only where the shell finds none, for NODE_PATH): a
// `node -e require.resolve` first was a second Node start for every plugin.
const dynamicProviderPluginScript = `#!/bin/sh
preload="$(dirname "$0")/${DYNAMIC_PROVIDER_PRELOAD}"
dir=$PWD
while :; do
  script="$dir/node_modules/@pulumi/pulumi/cmd/dynamic-provider/index.js"
  if [ -f "$script" ]; then exec node --require "$preload" "$script" "$@"; fi
  [ "$dir" = / ] && break
  dir=\${dir%/*}
  dir=\${dir:-/}
done
script=$(node -e 'process.stdout.write(require.resolve("@pulumi/pulumi/cmd/dynamic-provider"))') || exit 1
exec node --require "$preload" "$script" "$@"
`;

// Loaded before the dynamic provider: @pulumi/pulumi loads TypeScript's compiler and npm's dependency tree on
// start, for serializing a program's functions, which a provider process never does; they were half of its CPU
// to the first answer (0.8 s against 0.37 s, 5 starts each). In their place for @pulumi/pulumi's own modules, one
// that says so if it is ever used. The official plugin loads them; what it runs is otherwise the same.
const dynamicProviderPreload = `"use strict";
const Module = require("node:module");
const STAND_INS = {
${FUNCTION_SERIALIZATION_MODULES.map((request) => `  ${JSON.stringify(request)}: ${standInFor(request, "the dynamic provider of this engine")},`).join("\n")}
};
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  if (Object.hasOwn(STAND_INS, request) && /[\\\\/]@pulumi[\\\\/]pulumi[\\\\/]/.test(parent?.filename ?? "")) {
    return __filename + "#" + request;
  }
  return resolve.call(this, request, parent, ...rest);
};
for (const [request, exports] of Object.entries(STAND_INS)) {
  const id = __filename + "#" + request;
  const stand = new Module(id, module);
  stand.filename = id;
  stand.loaded = true;
  stand.exports = exports;
  require.cache[id] = stand;
}
`;

// Written, not built: cheap enough to check on every run, and per process
// then renamed so that two commands provisioning at once never see half a file.
function installDynamicProviderPlugin(version) {
  const bin = join(engineDir(version), "bin");
  const files = [
    { name: DYNAMIC_PROVIDER_PRELOAD, content: dynamicProviderPreload, mode: 0o644 },
    { name: "pulumi-resource-pulumi-nodejs", content: dynamicProviderPluginScript, mode: 0o755 },
  ];
  for (const { name, content, mode } of files) {
    const target = join(bin, name);
    try {
      if (readFileSync(target, "utf8") === content) continue;
    } catch {}
    const partial = `${target}.${process.pid}.partial`;
    writeFileSync(partial, content, { mode });
    renameSync(partial, target);
  }
}

const ownSourcesUnchanged = (folder, packages) => (entry) => entry.digest === sourceDigest(folder, packages);
const ownLanguageHostUnchanged = (command) => ownSourcesUnchanged(languageHostSource, languageHostPackages(command));

// What is built beside the engine, each on its own when its binary or its
// stamp entry is missing or `current` says the entry is stale: the official
// Node.js, Go and Python hosts only with the engine's version, ours when their
// sources change, the YAML host with yamlVersion.
const languageHosts = [
  {
    key: "languageHost",
    binary: "pulumi-language-nodejs",
    description: "the Node.js language host",
    current: (entry) => entry.source === "official" || ownLanguageHostUnchanged("nodejs")(entry),
    prepare: languageHostPreparer("Node.js", officialLanguageHost, "nodejs"),
  },
  {
    key: "goLanguageHost",
    binary: "pulumi-language-go",
    description: "the Go language host",
    current: (entry) => entry.source === "official" || ownLanguageHostUnchanged("golang")(entry),
    prepare: languageHostPreparer("Go", officialGoLanguageHost, "golang"),
  },
  {
    key: "pythonLanguageHost",
    binary: "pulumi-language-python",
    description: "the Python language host",
    current: (entry) => entry.source === "official" || ownLanguageHostUnchanged("python")(entry),
    prepare: languageHostPreparer("Python", officialPythonLanguageHost, "python"),
  },
  {
    key: "yamlLanguageHost",
    binary: "pulumi-language-yaml",
    description: "the YAML language host",
    current: (entry) => entry.source === `${yamlModule} v${yamlVersion}`,
    prepare: prepareYamlLanguageHost,
  },
];

// A code generator's two builds from `folder`, each rebuilt when the sources
// change, and the .NET one also with dotnetCodegenVersion.
function codeGenerators(folder, key, binary, description) {
  return [
    {
      key,
      binary,
      description,
      languages: ["nodejs", "python", "go"],
      current: ownSourcesUnchanged(folder),
      prepare: codeGeneratorPreparer(folder, undefined, []),
    },
    {
      key: `${key}Dotnet`,
      binary: `${binary}-dotnet`,
      description: `the .NET ${description.replace(/^the /, "")}`,
      languages: ["dotnet"],
      current: (entry) => ownSourcesUnchanged(folder)(entry) && entry.source.endsWith(`v${dotnetCodegenVersion}`),
      prepare: codeGeneratorPreparer(folder, dotnetCodegenVersion, ["-tags", "dotnet"]),
    },
  ];
}

const sdkGenerators = codeGenerators(sdkGeneratorSource, "sdkGenerator", "pulumi-sdk-gen", "the SDK generator");
// The program generator has a third build, for YAML: Pulumi YAML's generator
// is built with the Pulumi modules pulumi-yaml requires, as its language host
// is (with the engine's, or .NET's 3.225.1, it does not compile).
const programGenerators = [
  ...codeGenerators(programGeneratorSource, "programGenerator", "pulumi-program-gen", "the program generator"),
  {
    key: "programGeneratorYaml",
    binary: "pulumi-program-gen-yaml",
    description: "the YAML program generator",
    languages: ["yaml"],
    current: (entry) =>
      ownSourcesUnchanged(programGeneratorSource)(entry) && entry.source.endsWith(`v${yamlPulumiVersion}`),
    prepare: codeGeneratorPreparer(
      programGeneratorSource,
      yamlPulumiVersion,
      ["-tags", "yaml"],
      [`${yamlModule}@v${yamlVersion}`],
    ),
  },
];

async function ensurePart(version, part) {
  const entry = readStampFile(version)[part.key];
  const present = existsSync(join(engineDir(version), "bin", part.binary));
  if (!entry || !present || !part.current(entry)) await buildPart(version, part);
  return join(engineDir(version), "bin", part.binary);
}

/**
 * Makes sure an engine is available and returns the environment every engine
 * run must use: PATH with the engine, its language hosts and the dynamic
 * provider plugin, a file backend, a passphrase, and a project-local
 * PULUMI_HOME.
 */
export async function ensureEngine() {
  const version = pinnedPulumiVersion();
  const pathEntries = [];

  const onPath = pulumiOnPath();
  let source;
  if (onPath && compareVersions(onPath, version) >= 0) {
    source = `pulumi ${onPath} on PATH`;
  } else {
    if (!readStamp(version)) await buildEngine(version);
    for (const part of languageHosts) await ensurePart(version, part);
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

function generatorFor(generators, language, what) {
  const generator = generators.find((candidate) => candidate.languages.includes(language));
  if (!generator) {
    const known = generators.flatMap((candidate) => candidate.languages).join(", ");
    throw new Error(`no ${what} for the language "${language}": the languages are ${known}`);
  }
  return ensurePart(pinnedPulumiVersion(), generator);
}

/**
 * The SDK generator that writes `language`'s SDK (nodejs, python, go or
 * dotnet), built into .engine/v<version>/bin/ when missing or stale; returns
 * its path. It takes `-schema <schema.json> -language <language> -out
 * <folder>` (and `-logo <png>` for .NET's package icon), and replaces the
 * folder. Go is needed even when the CLI is on PATH.
 */
export async function ensureSdkGenerator(language) {
  return generatorFor(sdkGenerators, language, "SDK generator");
}

/**
 * The program generator that writes programs in `language` (nodejs, python,
 * go, dotnet or yaml) from PCL, built as the SDK generator is; returns its path. It
 * takes `-schema <schema.json> -language <language> <program.pp>...` and
 * prints a JSON object, each program's path → its source.
 */
export async function ensureProgramGenerator(language) {
  return generatorFor(programGenerators, language, "program generator");
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { source, env } = await ensureEngine();
  process.stdout.write(
    `${source}\n${Object.entries(env)
      .map(([k, v]) => `${k}=${v}`)
      .join("\n")}\n`,
  );
}
