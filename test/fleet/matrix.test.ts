import { copyFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalWorkspace } from "@pulumi/pulumi/automation";
import { CLIENT_DEFAULTS, PUBLISHED_REQUESTS_PER_MINUTE } from "pulumi-dmarc-partner/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type CiJob, ciJob } from "../support/ciJob";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { useEngine } from "../support/engine";
import { type RunningPostgres, startPostgres } from "../support/postgres";
import { until } from "../support/providerProcess";
import { busiestWindow, firstArrivalOf, loggedArrivals } from "../support/requestLog";
import { scaledService } from "../support/timeScale";
import { fleetProjectFolder, organizationsByName, serviceClient, tenant, uniqueFleetName } from "./support";

// The GitOps guide's "one job per shard" pipeline, as separate machines
// would run it: three `dmarc-fleet up --shard X` jobs at once, each from its
// own copy of the project with its own PULUMI_HOME and temporary folder, on
// one PostgreSQL backend from Debian's package, against a service that
// admits the published 60 requests a minute and says nothing of when to
// come back. The jobs book their turns in the backend's database, so
// together they keep to one pace with no refusal. One job is killed
// mid-run, as a cancelled CI job is, and run again from a fresh copy; then
// three destroy jobs at once leave nothing. Six times faster than the
// published minute under `npm test` (../support/timeScale.ts), at it under
// `npm run test:reliability`: three engines on two busy cores keep up with
// that pace from the first create to the last request, as the share of the
// limit asserted needs.

const TENANTS = 24;
const SHARD_SIZE = 8;
const MINUTE = 60_000;
const service = scaledService(6);

let emulator: EmulatorHandle;
let postgres: RunningPostgres;
const requestLog = join(mkdtempSync(join(tmpdir(), "dmarc-matrix-")), "requests.jsonl");
const fleet = uniqueFleetName("matrix");
const configStack = `${fleet}-config`;
const projectName = "dmarc-fleet-matrix";
const keys = Array.from({ length: TENANTS }, (_, index) => `m${String(index).padStart(2, "0")}`);
let copies = 0;

/** The repository: the project, the inventory and the config stack's settings file, as committed. */
let repository: string;

/** A copy of the project as a CI runner checks it out: its own folder, PULUMI_HOME and temporary folder. */
function checkout(): { cwd: string; env: Record<string, string> } {
  copies += 1;
  const cwd = fleetProjectFolder(`${projectName}-${fleet}-${copies}`);
  for (const file of ["Pulumi.yaml", "tenants.yaml", `Pulumi.${configStack}.yaml`]) {
    copyFileSync(join(repository, file), join(cwd, file));
  }
  const own = mkdtempSync(join(tmpdir(), "dmarc-matrix-runner-"));
  return { cwd, env: { PULUMI_HOME: join(own, "pulumi-home"), TMPDIR: own, PULUMI_BACKEND_URL: postgres.backendUrl } };
}

/** One CI job of the pipeline, in a checkout of its own. */
function job(args: string[]): CiJob {
  const { cwd, env } = checkout();
  return ciJob(cwd, env, [
    ...args,
    "--config-stack",
    configStack,
    "--fleet",
    fleet,
    "--shard-size",
    String(SHARD_SIZE),
  ]);
}

async function stats() {
  return emulator.control<{ requests: number; rateLimited: number }>("GET", "/stats");
}

/** The requests admitted from `from` on, after the first, over their span, as a share of the service's limit. */
function shareOfLimit(from: number): number {
  const times = loggedArrivals(requestLog, from, { admitted: true });
  const minutes = ((times.at(-1) ?? 0) - (times[0] ?? 0)) / MINUTE;
  return (times.length - 1) / (minutes * service.limitPerMinute);
}

/** Rewrites the shard's lock rows in the state table as a run on another host would have written them; how many. */
async function movedLocksToAnotherHost(shard: string): Promise<number> {
  const rows = await postgres.query(
    `SELECT key, data->>'data' FROM pulumi_state WHERE key LIKE '%/.pulumi/locks/%/${shard}/%.json'`,
  );
  for (const row of rows) {
    const [key, encoded] = row.split("|");
    const lock = JSON.parse(Buffer.from(encoded ?? "", "base64").toString("utf8")) as Record<string, unknown>;
    const moved = Buffer.from(JSON.stringify({ ...lock, hostname: "ci-runner-that-is-gone" })).toString("base64");
    await postgres.query(`UPDATE pulumi_state SET data = json_build_object('data', '${moved}') WHERE key = '${key}'`);
  }
  return rows.length;
}

const shards = [1, 2, 3].map((number) => `${fleet}-${String(number).padStart(3, "0")}`);

beforeAll(async () => {
  await useEngine();
  postgres = await startPostgres();
  emulator = await startTestEmulator({
    requestLogFile: requestLog,
    rateLimit: service.rateLimit,
  });
  repository = fleetProjectFolder(`${projectName}-${fleet}`);
  writeFileSync(join(repository, "Pulumi.yaml"), stringify({ name: projectName, runtime: "nodejs" }));
  writeFileSync(join(repository, "tenants.yaml"), stringify({ tenants: keys.map((key) => tenant(key)) }));
  const workspace = await LocalWorkspace.create({
    workDir: repository,
    envVars: { PULUMI_BACKEND_URL: postgres.backendUrl },
  });
  await workspace.createStack(configStack);
  await workspace.setAllConfig(configStack, {
    ...emulator.stackConfig,
    ...service.stackConfig(CLIENT_DEFAULTS.requestsPerMinute),
  });
}, 900_000);

afterAll(async () => {
  await postgres?.stop();
  await emulator?.emulator.close();
}, 120_000);

describe("one job per shard, on separate machines sharing a PostgreSQL backend", () => {
  it(
    "share one pace with no refusal; a killed job gives its place back, and runs again from a fresh copy",
    async () => {
      const started = Date.now();
      const [first, second, doomed] = shards.map((shard) => job(["up", "--shard", shard, "--json"]));
      // The doomed job is under way, its shard's creates pending, when its runner is cancelled.
      let sent = 0;
      await until(
        () => sent >= 45,
        "the jobs to be under way",
        10 * MINUTE,
        async () => {
          sent = (await stats()).requests;
          if (doomed?.child.exitCode !== null) throw new Error(`the job ended early: ${(await doomed?.done)?.stderr}`);
        },
      );
      await doomed?.cancel();
      const killedAt = Date.now();
      const results = await Promise.all([first?.done, second?.done]);
      for (const result of results) expect(result?.code, result?.stderr).toBe(0);
      const afterUp = await stats();
      const upShare = shareOfLimit(firstArrivalOf(requestLog, "POST", "/v1/organizations", started));
      // From two seconds of the service's minute after the kill: the others have taken the killed job's turns over.
      const afterKillShare = shareOfLimit(killedAt + service.windowMs / 30);
      console.log(
        `matrix up at ${service.factor}x the published minute: ${afterUp.requests} requests, ${afterUp.rateLimited} answered 429, ` +
          `${(100 * upShare).toFixed(1)}% of the limit from the shards' first create (${(100 * shareOfLimit(started)).toFixed(1)}% from the jobs' first request), ` +
          `${(100 * afterKillShare).toFixed(1)}% after the kill`,
      );
      expect(afterUp.rateLimited).toBe(0);
      expect(busiestWindow(loggedArrivals(requestLog), service.windowMs)).toBeLessThanOrEqual(
        PUBLISHED_REQUESTS_PER_MINUTE,
      );
      expect(upShare).toBeGreaterThanOrEqual(0.9);
      expect(afterKillShare).toBeGreaterThanOrEqual(0.85);
      expect(results.map((result) => result?.stderr).join("\n")).toContain("booked in PostgreSQL at");

      // The cancelled job's lock names its runner, another host than the one that runs the job again.
      expect(await movedLocksToAnotherHost(shards[2] ?? "")).toBeGreaterThan(0);
      // CI runs the cancelled job again, on another runner: a fresh copy of the project. The lock of a
      // host it cannot look into is refused, naming the option; with it, taken for the dead run's it is.
      const refused = await job(["up", "--shard", shards[2] ?? "", "--json"]).done;
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain("taken on another host");
      expect(refused.stderr).toContain("--unlock-other-hosts");
      const rerun = await job(["up", "--shard", shards[2] ?? "", "--json", "--unlock-other-hosts"]).done;
      expect(rerun.code, rerun.stderr).toBe(0);
      expect(rerun.stderr).toMatch(/interrupted .*; recovering/);
      // Converged: every tenant once, none created twice by the recovery. What each run said comes with a
      // tenant that is not there once, to tell which run lost or doubled it.
      const names = (await serviceClient(emulator).listOrganizations()).map((organization) => organization.name);
      const runs = { first: results[0], second: results[1], refused, rerun };
      const said = Object.entries(runs)
        .map(([run, result]) => `--- ${run}: exit ${result?.code}\n${result?.stdout}\n${result?.stderr}`.slice(-6000))
        .join("\n");
      for (const key of keys)
        expect(
          names.filter((name) => name === `Tenant ${key}`),
          `${key}; the runs said:\n${said}`,
        ).toHaveLength(1);

      const destroyedFrom = Date.now();
      const destroys = await Promise.all(shards.map((shard) => job(["destroy", "--shard", shard, "--json"]).done));
      for (const result of destroys) expect(result.code, result.stderr).toBe(0);
      const end = await stats();
      console.log(
        `matrix destroy: ${(100 * shareOfLimit(destroyedFrom)).toFixed(1)}% of the limit from the jobs' first request; ${end.rateLimited} answered 429 in all`,
      );
      expect(end.rateLimited).toBe(0);
      const left = await organizationsByName(serviceClient(emulator));
      for (const key of keys) expect(left.has(`Tenant ${key}`), key).toBe(false);
    },
    40 * MINUTE,
  );
});
