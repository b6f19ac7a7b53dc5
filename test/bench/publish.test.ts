import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PublishBenchReport, PublishRow } from "../../bench/src/publishBench";
import { projectRoot } from "../../scripts/engine.mjs";
import { dnsServersUnavailable } from "../support/dnsServers";
import { useEngine } from "../support/engine";

// `npm run bench -- --publish` at 3 tenants × 1 domain without latency: the
// fleet with and without publishing to BIND, what it reports and what it
// checks, never how long anything took (the machine is shared).

const unavailable = await dnsServersUnavailable();
if (unavailable) console.warn(`Skipping the bench's publishing run: ${unavailable}`);

describe.skipIf(unavailable !== undefined)("npm run bench -- --publish at 3 tenants × 1 domain", () => {
  const out = mkdtempSync(join(tmpdir(), "dmarc-bench-publish-"));
  let row: PublishRow;
  let markdown: string;

  beforeAll(async () => {
    const env = await useEngine();
    const args = ["--publish", "--tenants", "3", "--domains", "1", "--latency", "0", "--out", out];
    await promisify(execFile)(process.execPath, [join(projectRoot, "bench", "dist", "main.js"), ...args], {
      env: { ...process.env, ...env },
      timeout: 240_000,
    });
    const report = JSON.parse(readFileSync(join(out, "publish.json"), "utf8")) as PublishBenchReport;
    expect(report.rows).toHaveLength(1);
    row = report.rows[0] as PublishRow;
    markdown = readFileSync(join(out, "publish.md"), "utf8");
  }, 300_000);

  afterAll(() => {
    rmSync(out, { recursive: true, force: true });
  });

  it("publishes every record to BIND with up, and destroy removes every one", () => {
    expect(row).toMatchObject({ tenants: 3, records: 3, shards: 1, servedAfterUp: 3, servedAfterDestroy: 0 });
    // Organisation, group, webhook, subscription and domain per tenant, the Tenant, and the stack; then the records.
    expect(row.plainUp.changes).toEqual({ create: 19 });
    expect(row.publishingUp.changes).toEqual({ create: 22 });
    expect(row.publishingDestroy.changes).toEqual({ delete: 22 });
  });

  it("asks the service for what the fleet without publishing asks, and a no-change up runs no shard", () => {
    const withoutDomainCreates = (routes: Record<string, number>) =>
      Object.fromEntries(Object.entries(routes).filter(([route]) => !route.startsWith("POST /v1/domains")));
    expect(withoutDomainCreates(row.publishingUp.requestsByRoute)).toEqual(
      withoutDomainCreates(row.plainUp.requestsByRoute),
    );
    expect(row.noChangeShardsRun).toBe(0);
    expect(row.noChangeUp.changes).toEqual({});
    expect(row.drift.changes).toMatchObject({ same: 22 });
  });

  it("writes both tables", () => {
    expect(markdown).toMatch(
      /^\| 3 \| 3 \| 1 \| [\d.]+ \| [\d.]+ \| -?[\d.]+ \| -?[\d.]+ \| [\d.]+ \| \d+ \| [\d.]+ \| 0 \|/m,
    );
    expect(markdown).toContain("Requests to the service");
  });
});
