// Provisions the Pulumi engine for every command that needs it, with no
// network access beyond the Go module proxy and nothing written outside the
// project folder (npm's and Go's own caches excepted).
//
// A `pulumi` on PATH at least as new as the pinned @pulumi/pulumi is used as
// it is, with the plugins its install brings. Otherwise the engine is the
// artefact `engine` (scripts/build/artefact.mjs): a bin/ folder holding the
// CLI (cli.mjs), the language hosts (hosts.mjs) and the dynamic provider
// plugin (dynamicProvider.mjs), each its own artefact, linked side by side:
// the engine looks for its plugins next to its own executable, and warns
// ("using ... from $PATH") when the copy it finds on PATH is not that one.
// A second run finds every artefact made and builds nothing.
//
// Dependency-free on purpose: scripts/run.mjs provisions it before `npm ci`
// has finished on a fresh clone.

import { copyFileSync, linkSync, mkdirSync, writeFileSync } from "node:fs";
import { basename, delimiter, join } from "node:path";
import { ensureArtefact } from "../build/artefact.mjs";
import { ask } from "../build/process.mjs";
import { isMain, LOCAL_PASSPHRASE, pinnedPulumiVersion, projectRoot } from "../project.mjs";
import { ensurePulumiCli } from "./cli.mjs";
import { DYNAMIC_PROVIDER_FILES } from "./dynamicProvider.mjs";
import { ensureLanguageHosts } from "./hosts.mjs";

function compareVersions(a, b) {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return pa[i] - pb[i];
  return 0;
}

function pulumiOnPath() {
  const probe = ask("pulumi", ["version"], { env: { PULUMI_SKIP_UPDATE_CHECK: "true" } });
  return probe.ok ? /v?(\d+\.\d+\.\d+)/.exec(probe.stdout)?.[1] : undefined;
}

/** A hard link where the file system allows one (the CLI must be a file here, not a symlink), else a copy. */
function place(binary, folder) {
  const target = join(folder, basename(binary));
  try {
    linkSync(binary, target);
  } catch {
    copyFileSync(binary, target);
  }
}

/** The CLI, its language hosts and the dynamic provider plugin in one bin/ folder; answers it. */
async function ensureEngineBin(version) {
  const binaries = [await ensurePulumiCli(version), ...(await ensureLanguageHosts(version))];
  const inputs = { binaries, files: DYNAMIC_PROVIDER_FILES };
  const { folder } = await ensureArtefact("engine", inputs, (work) => {
    mkdirSync(join(work, "bin"));
    for (const binary of binaries) place(binary, join(work, "bin"));
    for (const { name, content, mode } of DYNAMIC_PROVIDER_FILES)
      writeFileSync(join(work, "bin", name), content, { mode });
    return { version };
  });
  return join(folder, "bin");
}

/**
 * Makes sure an engine is available and returns the environment every engine
 * run must use: PATH with the engine, its language hosts and the dynamic
 * provider plugin, a file backend, a passphrase, and a project-local
 * PULUMI_HOME. `version` is the one this checkout pins unless another
 * commit's is asked for (scripts/checkout.mjs).
 * @param {string} [version]
 * @returns {Promise<{ version: string, source: string, env: Record<string, string> }>}
 */
export async function ensureEngine(version = pinnedPulumiVersion()) {
  const pathEntries = [];
  const onPath = pulumiOnPath();
  let source;
  if (onPath && compareVersions(onPath, version) >= 0) {
    source = `pulumi ${onPath} on PATH`;
  } else {
    const bin = await ensureEngineBin(version);
    pathEntries.push(bin);
    source = `pulumi ${version} built into ${bin}`;
  }
  const stateDir = join(projectRoot, ".pulumi-state");
  const homeDir = join(projectRoot, ".pulumi-home");
  mkdirSync(stateDir, { recursive: true });
  mkdirSync(homeDir, { recursive: true });
  const env = {
    PATH: [...pathEntries, process.env.PATH ?? ""].join(delimiter),
    PULUMI_HOME: homeDir,
    PULUMI_BACKEND_URL: process.env.PULUMI_BACKEND_URL ?? `file://${stateDir}`,
    PULUMI_CONFIG_PASSPHRASE: process.env.PULUMI_CONFIG_PASSPHRASE ?? LOCAL_PASSPHRASE,
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
  };
  return { version, source, env };
}

if (isMain(import.meta.url)) {
  const { source, env } = await ensureEngine();
  process.stdout.write(
    `${source}\n${Object.entries(env)
      .map(([k, v]) => `${k}=${v}`)
      .join("\n")}\n`,
  );
}
