// A Node.js single executable application: Node makes the bundle a blob
// (`--experimental-sea-config`), and postject injects the blob into a copy
// of a `node` binary of the target platform. A macOS executable is re-signed
// with `codesign` after the injection, so it is built on macOS.

import { chmodSync, copyFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { runProcess } from "../build/process.mjs";
import { hostPlatform, PLATFORMS } from "./platforms.mjs";

const require = createRequire(import.meta.url);

/** The fuse Node's single executable applications look for, and the blob's resource name (Node's documentation). */
const SEA_FUSE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";
const SEA_RESOURCE = "NODE_SEA_BLOB";

/**
 * Makes the executable at `target` from the `carried` node and the bundle file, its blob made by `maker`
 * (this machine's node of the carried one's version), with `work` for what it takes to make.
 */
export async function makeExecutable(platform, { carried, maker }, bundleFile, work, target) {
  const blob = join(work, "sea.blob");
  const config = join(work, "sea-config.json");
  // On its own platform the blob is made by the node that carries it, with V8's compiled code of the bundle
  // (a third less CPU to the first answer); a cross build's blob holds the source only.
  const native = platform === hostPlatform();
  const settings = { main: bundleFile, output: blob, disableExperimentalSEAWarning: true, useCodeCache: native };
  writeFileSync(config, JSON.stringify(settings));
  await runProcess(maker, ["--experimental-sea-config", config], { what: "making the blob" });
  copyFileSync(carried, target);
  chmodSync(target, 0o755);
  const macOS = PLATFORMS[platform].os === "darwin";
  if (macOS) await runProcess("codesign", ["--remove-signature", target]);
  // postject's command rather than its function: its executable-format library prints warnings of no
  // consequence (ELF note names), kept out of the build's output unless the injection fails.
  const postject = [require.resolve("postject/dist/cli.js"), target, SEA_RESOURCE, blob, "--sentinel-fuse", SEA_FUSE];
  if (macOS) postject.push("--macho-segment-name", "NODE_SEA");
  await runProcess(process.execPath, postject, { what: "injecting the blob (postject)" });
  if (macOS) await runProcess("codesign", ["--sign", "-", target]);
}
