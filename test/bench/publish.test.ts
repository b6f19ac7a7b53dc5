import { beforeAll, describe, expect, it } from "vitest";
import type { PublishBenchReport, PublishRow } from "../../bench/src/publishBench";
import { runBench } from "../support/bench";
import { dnsServersUnavailable } from "../support/dnsServers";

// `npm run bench -- --publish` at 3 tenants × 1 domain without latency: the
// fleet with and without publishing to BIND, what it reports and what it
// checks, never how long anything took (the machine is shared).

const unavailable = await dnsServersUnavailable();
if (unavailable) console.warn(`Skipping the bench's publishing run: ${unavailable}`);

describe.skipIf(unavailable !== undefined)("npm run bench -- --publish at 3 tenants × 1 domain", () => {
  let row: PublishRow;
  let markdown: string;

  beforeAll(async () => {
    const run = await runBench<PublishBenchReport>(
      ["--publish", "--tenants", "3", "--domains", "1", "--latency", "0"],
      "publish",
    );
    expect(run.report.rows).toHaveLength(1);
    row = run.report.rows[0] as PublishRow;
    markdown = run.markdown;
  }, 300_000);

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
