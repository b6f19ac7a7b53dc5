import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { shownPath } from "../cli/shown";
import type { PublishRecord } from "../tenant/tenant";

// `dns: { publisher: ./publish.js }`: a module of the partner's exporting
// `publishRecord`, the Tenant's hook, for DNS services with only their own
// API (the official Cloudflare or Route 53 package). The file names it, so a
// run cannot forget it; its content is part of each shard's digest, so an
// edit reruns the shards whose records it publishes.

/** The module's `publishRecord`, loaded once per process; or why it cannot be. */
export function loadPublisher(folder: string, path: string): PublishRecord {
  const file = resolve(folder, path);
  const shown = shownPath(file, folder);
  let exported: Record<string, unknown>;
  try {
    exported = require(file) as Record<string, unknown>;
  } catch (error) {
    throw new Error(`the module ${shown} cannot be loaded: ${(error as Error).message.replaceAll(file, shown)}`);
  }
  if (typeof exported.publishRecord !== "function") {
    const names = Object.keys(exported);
    throw new Error(
      `the module ${shown} must export a function publishRecord(record, domain, opts, domainName), as the Tenant's publishRecord; it exports ${names.length > 0 ? names.join(", ") : "nothing"}`,
    );
  }
  return exported.publishRecord as PublishRecord;
}

/** Content hashes by file: read once per process, as `require` loads the module once. */
const digests = new Map<string, string>();

/** What stands for the module in a shard's digest: its content's hash. */
export function publisherDigest(folder: string, path: string): string {
  const file = resolve(folder, path);
  const known = digests.get(file);
  if (known !== undefined) return known;
  let content: Buffer;
  try {
    content = readFileSync(file);
  } catch (error) {
    throw new Error(`the module ${shownPath(file, folder)} cannot be read: ${(error as Error).message}`);
  }
  const digest = createHash("sha256").update(content).digest("hex").slice(0, 16);
  digests.set(file, digest);
  return digest;
}
