import { CLIENT_DEFAULTS, PUBLISHED_REQUESTS_PER_MINUTE } from "pulumi-dmarc-partner/client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { organizationsByName, serviceClient } from "../fleet/support";
import { admittedShareOfLimit, type LimitedService, limitedService, serviceCounts } from "../support/budgetRuns";
import { useEngine } from "../support/engine";
import { type GitopsMatrix, gitopsMatrix } from "../support/gitopsMatrix";
import { type RunningPostgres, startPostgres } from "../support/postgres";
import { until } from "../support/providerProcess";
import { FULL, report } from "./harness";

// The GitOps guide's matrix through the real engine, with its PostgreSQL
// backend (which also holds the partner's budget) going away mid-run: three
// `dmarc-fleet up --shard X --unlock-other-hosts` jobs, each from its own
// copy with its own PULUMI_HOME, 24 tenants, the service at the published
// 60 requests a minute without retry hints. Minutes long, at the service's
// own pace: the full matrix only (npm run test:reliability); the budget's
// fallback and rejoin at a scaled pace are in test/client/budgetOutage.test.ts.

const MINUTE = 60_000;
const TENANTS = 24;
const SHARD_SIZE = 8;
/** 60 s into the up at the jobs' pace, and 20 s of it, counted in the requests the service receives meanwhile. */
const SENT_BEFORE_OUTAGE = 57;
const SENT_DURING_OUTAGE = 18;

let postgres: RunningPostgres;
let service: LimitedService;

beforeAll(async () => {
  if (!FULL) return;
  await useEngine();
  postgres = await startPostgres();
}, 900_000);

afterEach(async () => {
  await service?.handle.emulator.close();
});

afterAll(async () => {
  await postgres?.stop();
}, 120_000);

async function matrixAt(name: string, tenants: number): Promise<GitopsMatrix> {
  service = await limitedService(PUBLISHED_REQUESTS_PER_MINUTE, 60);
  return gitopsMatrix({
    name,
    backendUrl: postgres.backendUrl,
    emulator: service.handle,
    tenants,
    shardSize: SHARD_SIZE,
    requestsPerMinute: CLIENT_DEFAULTS.requestsPerMinute,
  });
}

async function untilSent(requests: number, what: string): Promise<void> {
  let sent = 0;
  await until(
    () => sent >= requests,
    what,
    10 * MINUTE,
    async () => {
      sent = (await serviceCounts(service)).requests;
    },
  );
}

/** The service holds every declared tenant's organisation exactly once, and no other. */
async function expectExactlyDeclared(matrix: GitopsMatrix): Promise<void> {
  const organizations = await serviceClient(service.handle).listOrganizations();
  expect(organizations.map((organization) => organization.name).sort()).toEqual(
    matrix.keys.map((key) => `Tenant ${key}`).sort(),
  );
  expect((await organizationsByName(serviceClient(service.handle))).size).toBe(matrix.keys.length);
}

describe.skipIf(!FULL)("the GitOps matrix whose PostgreSQL backend goes away mid-run", () => {
  it(
    "stopped 60 s in for 20 s: every job ends 0 and rejoins the budget, exactly the declared tenants, few refusals",
    async () => {
      const matrix = await matrixAt("pgoutage", TENANTS);
      const started = Date.now();
      const jobs = matrix.shards.map((shard) => matrix.job(["up", "--shard", shard, "--json", "--unlock-other-hosts"]));
      await untilSent(SENT_BEFORE_OUTAGE, "the jobs to be 60 s in");
      await postgres.halt();
      try {
        await untilSent((await serviceCounts(service)).requests + SENT_DURING_OUTAGE, "20 s of the jobs alone");
      } finally {
        await postgres.restart();
      }
      const results = await Promise.all(jobs.map((job) => job.done));
      const { requests, rateLimited } = await serviceCounts(service);
      const limitShare = admittedShareOfLimit(service.log, PUBLISHED_REQUESTS_PER_MINUTE, started);
      report("budgetOutage", "postgres stopped for 20 s", {
        requests,
        rateLimited,
        refusedShare: rateLimited / requests,
        limitShare,
        codes: results.map((result) => result.code),
      });
      for (const result of results) {
        expect(result.code, result.stderr).toBe(0);
        expect(result.stderr).toMatch(/the budget at PostgreSQL at .* cannot be used/);
        expect(result.stderr).toMatch(/the budget at PostgreSQL at .* answers again: booking in it again/);
      }
      await expectExactlyDeclared(matrix);
      expect(rateLimited / requests).toBeLessThanOrEqual(0.02);
      expect(limitShare).toBeGreaterThanOrEqual(0.85);
    },
    40 * MINUTE,
  );

  it(
    "down past Pulumi's checkpoint retries: the job fails, and a plain rerun with --unlock-other-hosts heals the shard",
    async () => {
      const matrix = await matrixAt("pgdown", SHARD_SIZE);
      const shard = matrix.shards[0] ?? "";
      const up = matrix.job(["up", "--shard", shard, "--json", "--unlock-other-hosts"]);
      await untilSent(2 * SHARD_SIZE, "the shard's creates to be under way");
      await postgres.halt();
      const haltedAt = Date.now();
      let failed: Awaited<typeof up.done>;
      try {
        failed = await up.done;
      } finally {
        await postgres.restart();
      }
      const secondsToFail = (Date.now() - haltedAt) / 1000;
      // The engine tries each checkpoint write again for a while, then ends the update; the lock stays.
      expect(failed.code, failed.stderr).not.toBe(0);
      expect(failed.stderr).toContain(`${shard}: up failed`);
      expect(failed.stderr).not.toContain(`${new URL(postgres.backendUrl).username}@`);
      const rerun = await matrix.job(["up", "--shard", shard, "--json", "--unlock-other-hosts"]).done;
      report("budgetOutage", "postgres down until the job failed", {
        failedWith: failed.stderr.split("\n").find((line) => line.includes("up failed")),
        secondsToFail,
        rerunCode: rerun.code,
      });
      expect(rerun.code, rerun.stderr).toBe(0);
      expect(rerun.stderr).toMatch(/interrupted .*; recovering/);
      await expectExactlyDeclared(matrix);
    },
    40 * MINUTE,
  );
});
