import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLIENT_DEFAULTS, PUBLISHED_REQUESTS_PER_MINUTE } from "pulumi-dmarc-partner/client";
import { type FleetCommand, type FleetReport, recoverShard, runFleet } from "pulumi-dmarc-partner/fleet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fleetOptions, inventoryOf, tenant, uniqueFleetName } from "../fleet/support";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { useEngine } from "../support/engine";
import { busiestWindow } from "../support/requestLog";
import { eventually, FULL, kill, processesUnder, report } from "./harness";

// The fleet's one live budget at the service's published limit (60 a
// minute, 429 without a hint): three shards two at a time send every
// operation at the full pace from its first request to its last, never
// above the limit, and a shard killed mid-run leaves the others at pace.
// The emulator's request log is the service's own count. Minutes long: the
// full matrix only (npm run test:reliability).

const WINDOW_MS = 60_000;
const PACE = CLIENT_DEFAULTS.requestsPerMinute;
/** The least share of the pace an operation must use, from its first request to its last. */
const LEAST_SHARE = 0.95;

let emulator: EmulatorHandle;
const requestLog = join(mkdtempSync(join(tmpdir(), "dmarc-pace-")), "requests.jsonl");

interface Arrival {
  /** ms since the epoch */
  time: number;
  route: string;
}

/** Every API request the emulator logged, 429s included. */
function arrivals(): Arrival[] {
  const text = readFileSync(requestLog, "utf8").trim();
  if (text === "") return [];
  return text.split("\n").map((line) => {
    const record = JSON.parse(line) as { time: string; method: string; path: string };
    return { time: Date.parse(record.time), route: `${record.method} ${record.path.split("?")[0]}` };
  });
}

interface PaceFigures {
  requests: number;
  seconds: number;
  /** The requests after the first over the time from the first to the last, as a share of the pace. */
  share: number;
  busiest: number;
  rateLimited: number;
}

function figuresOf(times: readonly number[], rateLimited: number): PaceFigures {
  const sorted = [...times].sort((a, b) => a - b);
  const seconds = ((sorted.at(-1) ?? 0) - (sorted[0] ?? 0)) / 1000;
  const share = (sorted.length - 1) / ((seconds / 60) * PACE);
  return { requests: sorted.length, seconds, share, busiest: busiestWindow(sorted, WINDOW_MS), rateLimited };
}

async function rateLimitedSoFar(): Promise<number> {
  return (await emulator.control<{ rateLimited: number }>("GET", "/stats")).rateLimited;
}

function runOptions(fleet: string, tenants: number, shardSize: number) {
  const entries = Array.from({ length: tenants }, (_, index) => tenant(`${fleet}-${String(index).padStart(2, "0")}`));
  const base = fleetOptions(emulator, fleet, inventoryOf(entries), {
    shardSize,
    concurrency: 2,
    recover: recoverShard,
  });
  // The client's own bounds (no lowered maxAttempts) and the pace a partner gets against the service.
  return { ...base, config: { ...emulator.stackConfig, "dmarc:requestsPerMinute": { value: String(PACE) } } };
}

interface Measured {
  run: FleetReport;
  /** From the operation's first request to its last. */
  whole: PaceFigures;
  /**
   * From the shards' first request to the operation's last: before it, the
   * runner's catalogue read (up) waits for nothing but the shards' engines
   * to start, which no pacer can fill.
   */
  shards: PaceFigures;
}

/** Runs one fleet command and measures it from the emulator's log: its requests only. */
async function measured(command: FleetCommand, options: ReturnType<typeof runOptions>): Promise<Measured> {
  const before = arrivals().length;
  const limitedBefore = await rateLimitedSoFar();
  const run = await runFleet(command, options);
  const limited = (await rateLimitedSoFar()) - limitedBefore;
  const own = arrivals().slice(before);
  const catalogue = own.findIndex((arrival) => arrival.route === "GET /v1/partners/plans");
  const times = own.map((arrival) => arrival.time);
  const whole = figuresOf(times, limited);
  const shards = figuresOf(times.slice(catalogue + 1), limited);
  report("pace", `${command}, ${options.inventory.tenants.length} tenants`, { whole, shards, pace: run.pace });
  return { run, whole, shards };
}

beforeAll(async () => {
  await useEngine();
  emulator = await startTestEmulator({
    requestLogFile: requestLog,
    rateLimit: { requests: PUBLISHED_REQUESTS_PER_MINUTE, perSeconds: 60, hints: "none" },
  });
});

afterAll(async () => {
  await emulator?.emulator.close();
});

describe.skipIf(!FULL)("a fleet at the published limit, three shards two at a time", () => {
  it("sends up, drift and destroy at the full pace, never above the limit", async () => {
    const options = runOptions(uniqueFleetName("pace"), 24, 8);
    const operations: Record<string, Measured> = {};
    for (const command of ["up", "drift", "destroy"] as const) operations[command] = await measured(command, options);
    for (const [command, { run, whole, shards }] of Object.entries(operations)) {
      const shown = `${command}: ${JSON.stringify({ whole, shards })}`;
      expect(
        run.results.map((result) => result.status),
        shown,
      ).toEqual(["done", "done", "done"]);
      expect(whole.rateLimited, shown).toBe(0);
      expect(whole.busiest, shown).toBeLessThanOrEqual(PUBLISHED_REQUESTS_PER_MINUTE);
      expect(shards.share, shown).toBeGreaterThanOrEqual(LEAST_SHARE);
      // The runner's own figure agrees with the service's count: every request took its turn from the pacer.
      expect(run.pace?.requests, shown).toBe(whole.requests);
      expect(run.pace?.perMinute, shown).toBe(PACE);
    }
    const progress = options.progressText();
    expect(progress).toMatch(new RegExp(`requests: \\d+/min of ${PACE} in use, \\d+ waiting`));
    expect(progress).not.toContain("cannot be reached");
  }, 1_800_000);

  it("keeps the other shards at pace and the limit unexceeded when one shard is killed, and the rerun heals", async () => {
    const options = runOptions(uniqueFleetName("pacekill"), 12, 4);
    const victim = join(options.stateDir, "work", `${options.fleet}-001`);
    const before = arrivals().length;
    const limitedBefore = await rateLimitedSoFar();
    const running = runFleet("up", options);
    // The first shard's engine and provider, once its creates are under way.
    const processes = await eventually(
      "the first shard's provider at work",
      async () => ({ sent: arrivals().length - before, pids: processesUnder(victim) }),
      ({ sent, pids }) => sent >= 30 && pids.length > 0,
      3_000,
    );
    const killedAt = Date.now();
    for (const pid of processes.pids) kill(pid);
    const first = await running;
    expect(first.results.find((result) => result.shard === `${options.fleet}-001`)?.status).toBe("failed");
    const times = arrivals()
      .slice(before)
      .map((arrival) => arrival.time);
    const figures = figuresOf(
      times.filter((time) => time > killedAt),
      (await rateLimitedSoFar()) - limitedBefore,
    );
    report("pace", "up with a shard killed, after the kill", { ...figures });
    expect(figures.rateLimited).toBe(0);
    expect(busiestWindow(times, WINDOW_MS)).toBeLessThanOrEqual(PUBLISHED_REQUESTS_PER_MINUTE);
    // The shards left go on at the pace the killed one's turns no longer take.
    expect(figures.share).toBeGreaterThanOrEqual(LEAST_SHARE);

    const healed = await runFleet("up", options);
    expect(healed.ok, JSON.stringify(healed.results)).toBe(true);
    const gone = await runFleet("destroy", options);
    expect(gone.ok, JSON.stringify(gone.results)).toBe(true);
    expect(await rateLimitedSoFar()).toBe(limitedBefore);
  }, 1_800_000);
});
