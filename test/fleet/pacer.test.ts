import type { ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLIENT_DEFAULTS, PacerUnreachable, RemoteTurns } from "pulumi-dmarc-partner/client";
import { type FleetPacer, startFleetPacer } from "pulumi-dmarc-partner/fleet";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { freePort } from "../support/loopback";
import { exited, type ProviderProcess, providerProcess, until } from "../support/providerProcess";
import { busiestWindow, loggedArrivals } from "../support/requestLog";

// The fleet's one live budget: processes that each stand for a shard's
// provider (the provider's own way from settings and environment to a
// client) take their turns from one pacer. The pace here is ten times the
// service's, so the test takes seconds; the emulator's request log says
// when each request arrived.

const PACE = 600;
const SPACING_MS = 60_000 / PACE;

let emulator: EmulatorHandle;
const requestLog = join(mkdtempSync(join(tmpdir(), "dmarc-pacer-")), "requests.jsonl");
const children: ChildProcess[] = [];
let pacer: FleetPacer | undefined;

/** A provider-like process at half the pace unless `env` says otherwise, killed after each test. */
function provider(calls: number, env: Record<string, string>, options: { waitForGo?: boolean } = {}): ProviderProcess {
  const started = providerProcess(
    calls,
    { ...emulator.env, DMARC_REQUESTS_PER_MINUTE: String(PACE / 2), ...env },
    options,
  );
  children.push(started.child);
  return started;
}

beforeAll(async () => {
  emulator = await startTestEmulator({ requestLogFile: requestLog });
});

afterEach(async () => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  await pacer?.close();
  pacer = undefined;
});

afterAll(async () => {
  await emulator?.emulator.close();
});

describe("the fleet's pacer", () => {
  it("paces every process that shares it as one, and a process killed while it waits takes no turn from the others", async () => {
    pacer = await startFleetPacer(PACE);
    const from = Date.now();
    const env = pacer.env;
    const steady = [provider(15, env), provider(15, env)];
    const doomed = provider(40, env);
    // The doomed one has sent some and holds turns waiting (its token and 40 reads, 16 in flight at most).
    await until(() => (pacer?.use().requests ?? 0) >= 10 && (pacer?.waiting ?? 0) >= 20, "turns waiting at the pacer");
    const givenBeforeKill = pacer.use().requests;
    doomed.child.kill("SIGKILL");
    await exited(doomed.child);
    // Its waiting turns are dropped: what waits now is the others' only (16 in flight each at most).
    await until(() => (pacer?.waiting ?? 99) <= 32, "the killed process's turns to leave the queue", 10_000);
    const codes = await Promise.all(steady.map(({ child }) => exited(child)));
    expect(codes, steady.map(({ output }) => output()).join("\n")).toEqual([0, 0]);

    const use = pacer.use();
    expect(use.requests).toBeGreaterThan(givenBeforeKill);
    const times = loggedArrivals(requestLog, from);
    // Even spacing at the shared pace, whoever sent: never more than a tenth of a minute's turns in any tenth of a minute.
    expect(busiestWindow(times, 6_000)).toBeLessThanOrEqual(PACE / 10 + 1);
    expect(busiestWindow(times, 1_000)).toBeLessThanOrEqual(Math.ceil(1_000 / SPACING_MS) + 1);
    // While turns waited, the pacer gave them at its pace (late timers on a busy machine only lengthen gaps).
    expect(use.share).toBeGreaterThan(0.7);
    expect(use.share).toBeLessThanOrEqual(1.02);
  }, 120_000);

  it("refuses a process without the run's token", async () => {
    pacer = await startFleetPacer(PACE);
    const stranger = new RemoteTurns({ url: pacer.address.url, token: "not-the-token" });
    await expect(stranger.take()).rejects.toThrow(PacerUnreachable);
    await expect(stranger.take()).rejects.toThrow(/answered 401/);
    stranger.close();
    expect(pacer.use().requests).toBe(0);
  });

  it("a provider that cannot reach its pacer paces itself at its own rate and says so once", async () => {
    const port = await freePort();
    const from = Date.now();
    const lost = provider(8, { DMARC_PACER_URL: `http://127.0.0.1:${port}`, DMARC_PACER_TOKEN: "s3cr3t-pacer-token" });
    expect(await exited(lost.child), lost.output()).toBe(0);
    const notices = lost.output().match(/^dmarc: .*cannot be reached.*$/gm) ?? [];
    expect(notices).toHaveLength(1);
    expect(notices[0]).toContain(`pacing at ${PACE / 2} requests a minute (requestsPerMinute) instead`);
    expect(notices[0]).not.toContain("s3cr3t-pacer-token");
    const times = loggedArrivals(requestLog, from);
    expect(times).toHaveLength(9);
    // Its own rate, half the pace: the token and eight reads a double interval apart on average (a new
    // connection's setup may bring one request closer to the next), never three within one interval.
    const own = 2 * SPACING_MS;
    expect(((times.at(-1) ?? 0) - (times[0] ?? 0)) / (times.length - 1)).toBeGreaterThanOrEqual(own * 0.95);
    expect(busiestWindow(times, own)).toBeLessThanOrEqual(2);
  }, 60_000);
});

// The margin: how close to the service's 60 a minute a pacer that spaces its
// turns and counts its own window may go. Ten times faster than the service
// (60 requests per 6 s), so the same jitter weighs ten times more here: a
// pace that holds here holds against the service. Two processes one after
// the other, the second's first request right after the first's last, as a
// new provider process (or a new fleet run) starts while the service's
// window still holds the previous one's minute.
const SCALE = 10;
const LIMIT = 60;
const WINDOW_SECONDS = 60 / SCALE;

interface MarginRun {
  requests: number;
  rateLimited: number;
  /** The most requests the service's window held at once. */
  busiest: number;
}

/** Two processes at `perMinute` (scaled), the second's first request as soon as the first's last has arrived. */
async function margin(perMinute: number): Promise<MarginRun> {
  const log = join(mkdtempSync(join(tmpdir(), "dmarc-margin-")), "requests.jsonl");
  const limited = await startTestEmulator({
    requestLogFile: log,
    rateLimit: { requests: LIMIT, perSeconds: WINDOW_SECONDS, hints: "none" },
  });
  try {
    const env = { ...limited.env, DMARC_REQUESTS_PER_MINUTE: String(perMinute * SCALE) };
    const stats = () => limited.control<{ requests: number; rateLimited: number }>("GET", "/stats");
    const firstCalls = 2 * perMinute;
    const second = provider(perMinute, env, { waitForGo: true });
    const first = provider(firstCalls, env);
    let sent = 0;
    // The first sends its token request and its reads; the second starts the moment the last has arrived.
    await until(
      () => sent >= firstCalls + 1,
      "the first process's last request",
      60_000,
      async () => {
        sent = (await stats()).requests;
      },
    );
    second.child.stdin?.end("go\n");
    expect(await exited(first.child), first.output()).toBe(0);
    expect(await exited(second.child), second.output()).toBe(0);
    const { requests, rateLimited } = await stats();
    return { requests, rateLimited, busiest: busiestWindow(loggedArrivals(log), WINDOW_SECONDS * 1000) };
  } finally {
    await limited.emulator.close();
  }
}

describe("the pace's margin against the service's sliding window", () => {
  it("holds at the default pace, a new process starting right after another's last request", async () => {
    const perMinute = CLIENT_DEFAULTS.requestsPerMinute;
    const run = await margin(perMinute);
    console.log(`[margin] ${perMinute}/min of ${LIMIT} (x${SCALE}): ${JSON.stringify(run)}`);
    expect(run.requests).toBe(3 * perMinute + 2);
    expect(run.rateLimited).toBe(0);
    expect(run.busiest).toBeLessThanOrEqual(LIMIT);
  }, 120_000);
});
