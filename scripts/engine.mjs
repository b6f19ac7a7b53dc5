// Provisions the Pulumi engine for every command that needs it, with no
// network access beyond the Go module proxy and nothing written outside the
// project folder (npm's and Go's own caches excepted).
//
// Order: a `pulumi` on PATH at least as new as the pinned @pulumi/pulumi is
// used as it is; otherwise the CLI is built once from its Go module into
// .engine/<version>/ and reused on later runs.
//
// Dependency-free on purpose: it runs before `npm ci` has finished on a fresh
// clone only through scripts/run.mjs, which installs first, but it must never
// need anything from node_modules to build the engine.

import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const projectRoot = resolve(fileURLToPath(new URL("..", import.meta.url)));

const engineCache = join(projectRoot, ".engine");

// The passphrase only protects stacks in the project-local file backend used
// by tests, the demo and the benchmark; a real stack brings its own.
const localPassphrase = "dmarc-partner-local";

export function pinnedPulumiVersion() {
  const manifest = JSON.parse(readFileSync(join(projectRoot, "provider", "package.json"), "utf8"));
  const version = manifest.dependencies?.["@pulumi/pulumi"];
  if (!/^\d+\.\d+\.\d+$/.test(version ?? "")) {
    throw new Error(`provider/package.json must pin @pulumi/pulumi exactly (found "${version}")`);
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

function goAvailable() {
  return spawnSync("go", ["version"], { encoding: "utf8" }).status === 0;
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
      process.stderr.write(`[engine]   ${label}: ${seconds}s, ${downloads} modules downloaded, ${packages} packages built\n`);
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
  if (!goAvailable()) {
    throw new Error(
      [
        `The Pulumi CLI ${version} or newer is not on PATH, and Go is not installed to build it.`,
        "Either install the Pulumi CLI (https://www.pulumi.com/docs/install/),",
        "or install Go 1.25+ (https://go.dev/dl/) and run this command again: it builds the engine once into .engine/.",
      ].join("\n"),
    );
  }
  const env = goEnv();
  const dir = engineDir(version);
  const work = join(dir, "build");
  rmSync(work, { recursive: true, force: true });
  mkdirSync(join(dir, "bin"), { recursive: true });
  mkdirSync(work, { recursive: true });

  const engineModule = "github.com/pulumi/pulumi/pkg/v3";
  const sdkModule = "github.com/pulumi/pulumi/sdk/v3";
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
  await runStep("compiling pulumi", "go", ["build", "-v", "-trimpath", "-ldflags", ldflags, "-o", output, `${engineModule}/cmd/pulumi`], {
    cwd: work,
    env,
  });
  renameSync(output, join(dir, "bin", "pulumi"));
  rmSync(work, { recursive: true, force: true });
  writeFileSync(stampPath(version), `${JSON.stringify({ version, builtAt: new Date().toISOString() }, null, 2)}\n`);
  process.stderr.write(`[engine] built Pulumi ${version} into ${join(dir, "bin")}\n`);
}

/**
 * Makes sure an engine is available and returns the environment every engine
 * run must use: PATH with the engine and the dynamic provider plugin, a file
 * backend, a passphrase, and a project-local PULUMI_HOME.
 */
export async function ensureEngine() {
  const version = pinnedPulumiVersion();
  const dynamicProviderPlugin = join(projectRoot, "node_modules", "@pulumi", "pulumi");
  const pathEntries = [dynamicProviderPlugin];

  const onPath = pulumiOnPath();
  let source;
  if (onPath && compareVersions(onPath, version) >= 0) {
    source = `pulumi ${onPath} on PATH`;
  } else {
    if (!readStamp(version)) await buildEngine(version);
    pathEntries.unshift(join(engineDir(version), "bin"));
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

if (import.meta.url === `file://${process.argv[1]}`) {
  const { source, env } = await ensureEngine();
  process.stdout.write(`${source}\n${Object.entries(env).map(([k, v]) => `${k}=${v}`).join("\n")}\n`);
}
