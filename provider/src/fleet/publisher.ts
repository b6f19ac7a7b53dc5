import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { UsageError } from "../cli/options";
import type { PublishRecord } from "../tenant/tenant";

// `dmarc-fleet --publisher <file>`: a module exporting `publishRecord`, the
// Tenant's hook, for DNS services with only their own API (the official
// Cloudflare or Route 53 package). The shards' programs run in the runner's
// process, so the module is loaded here and its resources are the shards'.

/** The hook a publisher module exports, and what stands for it in the shards' digests. */
export interface Publisher {
  declare: { publishRecord: PublishRecord };
  /** The module file's content hash: editing the file reruns the shards it publishes for. */
  publisherDigest: string;
}

/** Loads the module at `path` (absolute), refusing one that cannot be loaded or exports no `publishRecord`. */
export function loadPublisher(path: string): Publisher {
  let text: string;
  let exported: Record<string, unknown>;
  try {
    text = readFileSync(path, "utf8");
    exported = require(path) as Record<string, unknown>;
  } catch (error) {
    throw new UsageError(`--publisher ${path}: the module cannot be loaded: ${(error as Error).message}`);
  }
  const publishRecord = exported.publishRecord;
  if (typeof publishRecord !== "function") {
    const names = Object.keys(exported);
    throw new UsageError(
      `--publisher ${path}: the module must export a function publishRecord(record, domain, opts, domainName), as the Tenant's publishRecord; it exports ${names.length > 0 ? names.join(", ") : "nothing"}`,
    );
  }
  return {
    declare: { publishRecord: publishRecord as PublishRecord },
    publisherDigest: createHash("sha256").update(text).digest("hex").slice(0, 16),
  };
}
