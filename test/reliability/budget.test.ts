import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalWorkspace } from "@pulumi/pulumi/automation";
import { CLIENT_DEFAULTS, PUBLISHED_REQUESTS_PER_MINUTE } from "pulumi-dmarc-partner/client";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { fleetProjectFolder, tenant, uniqueFleetName } from "../fleet/support";
import { ciJob } from "../support/ciJob";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { useEngine } from "../support/engine";
import { firstArrivalOf, loggedArrivals } from "../support/requestLog";
import { FULL, report } from "./harness";

// Two fleets of one partner started together on one machine, as two
// pipelines on one self-hosted runner would be: each its own project
// folder, file backend, PULUMI_HOME and temporary folder, against a service
// admitting the published 60 requests a minute whose 429s carry no hint.
// Sharing this machine's budget they keep to one pace with no refusal;
// with the store switched off they find a shared pace from their 429s.

const MINUTE = 60_000;
const TENANTS = 12;

let emulator: EmulatorHandle | undefined;
let requestLog = "";

beforeAll(async () => {
  if (FULL) await useEngine();
});

afterEach(async () => {
  await emulator?.emulator.close();
  emulator = undefined;
});

/** A partner's pipeline of its own: project, inventory, file backend and config stack, on the shared service. */
async function pipeline(service: EmulatorHandle, store: string | undefined) {
  const fleet = uniqueFleetName("two");
  const cwd = fleetProjectFolder(`dmarc-fleet-budget-${fleet}`);
  const own = mkdtempSync(join(tmpdir(), "dmarc-budget-pipeline-"));
  const backend = join(own, "state");
  mkdirSync(backend);
  const env = { PULUMI_HOME: join(own, "pulumi-home"), TMPDIR: own, PULUMI_BACKEND_URL: `file://${backend}` };
  writeFileSync(join(cwd, "Pulumi.yaml"), stringify({ name: "dmarc-fleet-budget", runtime: "nodejs" }));
  const keys = Array.from({ length: TENANTS }, (_, index) => `${fleet.slice(-6)}${index}`);
  writeFileSync(join(cwd, "tenants.yaml"), stringify({ tenants: keys.map((key) => tenant(key)) }));
  const workspace = await LocalWorkspace.create({ workDir: cwd, envVars: env });
  const configStack = `${fleet}-config`;
  await workspace.createStack(configStack);
  await workspace.setAllConfig(configStack, {
    ...service.stackConfig,
    "dmarc:requestsPerMinute": { value: String(CLIENT_DEFAULTS.requestsPerMinute) },
    ...(store ? { "dmarc:budgetStore": { value: store } } : {}),
  });
  return () => ciJob(cwd, env, ["up", "--config-stack", configStack, "--fleet", fleet, "--shard-size", "6", "--json"]);
}

/** Both pipelines' `up` at once; the service's count of requests and refusals, and the share of the limit admitted. */
async function together(store: string | undefined) {
  requestLog = join(mkdtempSync(join(tmpdir(), "dmarc-budget-log-")), "requests.jsonl");
  emulator = await startTestEmulator({
    requestLogFile: requestLog,
    rateLimit: { requests: PUBLISHED_REQUESTS_PER_MINUTE, perSeconds: 60, hints: "none" },
  });
  const starts = [await pipeline(emulator, store), await pipeline(emulator, store)];
  const results = await Promise.all(starts.map((start) => start().done));
  for (const result of results) expect(result.code, result.stderr).toBe(0);
  const stats = await emulator.control<{ requests: number; rateLimited: number }>("GET", "/stats");
  const refused = stats.rateLimited / stats.requests;
  const reports = results.map((result) => JSON.parse(result.stdout) as { pace?: { budget?: { kind: string } } });
  return {
    ...stats,
    refused,
    // As the fleet's own pace figures are measured: from the shards' first create, once the runners have
    // read the catalogue and started their engines.
    share: shareOfLimit(firstCreate()),
    wholeSpanShare: shareOfLimit(0),
    kinds: reports.map((report) => report.pace?.budget?.kind),
  };
}

/** The admitted requests from `from` on, after the first, over their span, as a share of the published limit. */
function shareOfLimit(from: number): number {
  const admitted = loggedArrivals(requestLog, from, { admitted: true });
  const minutes = ((admitted.at(-1) ?? 0) - (admitted[0] ?? 0)) / MINUTE;
  return (admitted.length - 1) / (minutes * PUBLISHED_REQUESTS_PER_MINUTE);
}

function firstCreate(): number {
  return firstArrivalOf(requestLog, "POST", "/v1/organizations");
}

describe.skipIf(!FULL)("two fleets of one partner on one machine", () => {
  it(
    "share this machine's budget: one pace, no refusal",
    async () => {
      const run = await together(undefined);
      report("budget", "two fleets, machine budget", run);
      expect(run.kinds).toEqual(["machine", "machine"]);
      expect(run.refused).toBeLessThanOrEqual(0.02);
      expect(run.share).toBeGreaterThanOrEqual(0.9);
    },
    30 * MINUTE,
  );

  it(
    "with no store at all, slow down on 429s and share the limit",
    async () => {
      const run = await together("off");
      report("budget", "two fleets, no store", run);
      expect(run.kinds).toEqual(["adaptive", "adaptive"]);
      expect(run.refused).toBeLessThanOrEqual(0.05);
      expect(run.share).toBeGreaterThanOrEqual(0.8);
    },
    30 * MINUTE,
  );
});
