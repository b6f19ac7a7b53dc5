import type { ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLIENT_DEFAULTS, PacerUnreachable, RemoteTurns } from "pulumi-dmarc-partner/client";
import { FleetPacer, startFleetPacer } from "pulumi-dmarc-partner/fleet";
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

/** One turn the pacer gave: when (this process's clock, and the wall clock the request log uses), and how many waited after it. */
interface GivenTurn {
  at: number;
  wallAt: number;
  waiting: number;
}

/** The fleet's pacer, as the runner holds it, noting each turn it gives. */
class NotedPacer extends FleetPacer {
  readonly turnsGiven: GivenTurn[] = [];

  override async take(signal?: AbortSignal): Promise<void> {
    await super.take(signal);
    this.turnsGiven.push({ at: performance.now(), wallAt: Date.now(), waiting: this.waiting });
  }
}

/** How often the heartbeat beats: what the spacing check cannot tell apart. */
const BEAT_MS = 2;

/**
 * When this process's event loop ran, every {@link BEAT_MS}, from now until
 * `stop()`: a gap between two beats is a time it could run nothing, its
 * pacer's timers included (a busy machine, a garbage collection). No beat
 * falls between a turn given and the pacer's note of it (microtasks of one
 * callback), so the turn was given after the beat before the note.
 */
function heartbeat(): { beats: number[]; stop: () => void } {
  const beats = [performance.now()];
  const timer = setInterval(() => beats.push(performance.now()), BEAT_MS);
  return { beats, stop: () => clearInterval(timer) };
}

/** The last beat before `time`: the earliest a turn noted at `time` may have been given. */
function beatBefore(beats: readonly number[], time: number): number {
  return beats.findLast((beat) => beat <= time) ?? Number.NEGATIVE_INFINITY;
}

/**
 * How long, from `from` to `to`, the loop could not run: the part of each
 * gap between two beats longer than two beats that falls in that time.
 */
function stalled(beats: readonly number[], from: number, to: number): number {
  let total = 0;
  for (let index = 1; index < beats.length; index++) {
    const [before, after] = [beats[index - 1] as number, beats[index] as number];
    if (after - before > 2 * BEAT_MS) total += Math.max(0, Math.min(after, to) - Math.max(before, from));
  }
  return total;
}

/** Turns given closer than the spacing after the one before, however late each was noted. */
function earlyTurns(given: readonly GivenTurn[], beats: readonly number[]): string[] {
  return given.slice(1).flatMap((turn, index) => {
    const widest = turn.at - beatBefore(beats, (given[index] as GivenTurn).at);
    return widest < SPACING_MS ? [`turn ${index + 2}: at most ${widest.toFixed(1)} ms after the one before`] : [];
  });
}

/** Turns given later than the spacing after the one before, while they waited, by more than the loop stalled. */
function lateTurns(given: readonly GivenTurn[], beats: readonly number[]): string[] {
  return given.slice(1).flatMap((turn, index) => {
    const previous = given[index] as GivenTurn;
    if (previous.waiting === 0) return [];
    const due = previous.at + SPACING_MS;
    // On a loop that runs, a timer fires within a beat of its time, and the turn is noted within another.
    const late = turn.at - due - stalled(beats, due, turn.at);
    return late > 5 * BEAT_MS ? [`turn ${index + 2}: ${Math.round(late)} ms later than the loop allowed`] : [];
  });
}

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
    const noted = new NotedPacer({
      requestsPerMinute: PACE,
      budget: { setting: "off", partner: "" },
      windowMs: CLIENT_DEFAULTS.rateLimitWindowSeconds * 1000,
    });
    pacer = noted;
    await noted.start();
    const loop = heartbeat();
    const from = Date.now();
    const env = noted.env;
    const steady = [provider(15, env), provider(15, env)];
    // More reads than it can be given before the others have all started and queued theirs, however slowly.
    const doomed = provider(200, env);
    // The doomed one has sent some and holds turns waiting (its reads, 16 in flight at most).
    await until(() => noted.use().requests >= 10 && noted.waiting >= 20, "turns waiting at the pacer");
    const givenBeforeKill = noted.use().requests;
    doomed.child.kill("SIGKILL");
    await exited(doomed.child);
    // Its waiting turns are dropped: what waits now is the others' only (16 in flight each at most).
    await until(() => noted.waiting <= 32, "the killed process's turns to leave the queue", 10_000);
    const codes = await Promise.all(steady.map(({ child }) => exited(child)));
    loop.stop();
    expect(codes, steady.map(({ output }) => output()).join("\n")).toEqual([0, 0]);

    const use = noted.use();
    expect(use.requests).toBeGreaterThan(givenBeforeKill);
    expect(noted.turnsGiven).toHaveLength(use.requests);
    // Even spacing at the shared pace, whoever asked, where the pacer gives the turns: never closer than
    // the spacing, so never more than a tenth of a minute's turns in any tenth of a minute.
    expect(earlyTurns(noted.turnsGiven, loop.beats)).toEqual([]);
    // Every request the service received had its turn first: the k-th arrival came after the k-th turn.
    // (When the service saw them also holds each request's own way there, a process scheduled late or a
    // new connection: the pace's margin below is for that.)
    const arrivals = loggedArrivals(requestLog, from);
    expect(arrivals.length).toBeLessThanOrEqual(noted.turnsGiven.length);
    expect(
      arrivals.filter((time, index) => time < (noted.turnsGiven[index]?.wallAt ?? Number.POSITIVE_INFINITY)),
    ).toEqual([]);
    // While turns waited, the pacer gave each at its pace: no later than the spacing after the one
    // before, but for the time this process could not run at all (late timers only lengthen gaps).
    expect(lateTurns(noted.turnsGiven, loop.beats)).toEqual([]);
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
    // Its own rate, half the pace: the eight reads a double interval apart on average, and with the token
    // request before them never three within one interval. The average starts at the first read: the token
    // request is the new process's first, sent on its first connection, and arrives later after its turn
    // than any read does, by what that first connection costs (tens of milliseconds on a loaded machine),
    // which would count against the spacing the turns kept.
    const own = 2 * SPACING_MS;
    const reads = times.slice(1);
    expect(((reads.at(-1) ?? 0) - (reads[0] ?? 0)) / (reads.length - 1)).toBeGreaterThanOrEqual(own * 0.95);
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
