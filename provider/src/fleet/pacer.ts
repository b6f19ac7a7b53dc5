import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  formatRate,
  type PacerAddress,
  type Pacing,
  pacingFor,
  SpacedTurns,
  TURN_PATH,
  type TurnAnswer,
  type TurnSource,
  takeTurnsFrom,
  WINDOW_MS,
} from "../client";
import { clientOptionsFrom, PACER_ENV } from "../runtime/config";
import { type FleetOptions, settingsOf } from "./fleetOptions";
import type { ProgressSink } from "./progress";
import type { ShardResult } from "./result";

// The fleet's one request budget, live: a pacer the runner holds for the run,
// on a loopback port of its own, from which every shard's provider process
// (through its environment, PACER_ENV) and the runner itself take every
// request's turn. While any of them has a request waiting the fleet sends at
// the full pace, never above; a shard that starts, ends or dies changes
// nothing for the others, since the pacer counts turns, not shards.

/** The pace a run held and how much of it the run used, from its first turn to its last. */
export interface PaceUse {
  /** The fleet's pace, in requests a minute. */
  perMinute: number;
  /** Turns given: every request the runner and the shards' providers sent, as the service counts them. */
  requests: number;
  /** From the first turn to the last. */
  seconds: number;
  /** The requests after the first over that time, as a share of the pace (1 = the full pace); undefined below two requests. */
  share: number | undefined;
}

/** The pacer now: its pace, the turns it gave in the last minute (as a rate), and the turns waiting. */
export interface PaceNow {
  perMinute: number;
  inUse: number;
  waiting: number;
}

export class FleetPacer implements TurnSource {
  private readonly spaced: SpacedTurns;
  private readonly token = randomBytes(32).toString("base64url");
  private readonly server: Server;
  private firstAt: number | undefined;
  private lastAt: number | undefined;
  private given = 0;
  private url = "";

  /** @param perMinute the fleet's pace, for every shard and the runner together. */
  constructor(perMinute: number) {
    this.spaced = new SpacedTurns(perMinute);
    this.server = createServer((request, response) => this.answer(request, response));
  }

  /** Listens on an ephemeral port of 127.0.0.1. */
  async start(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(0, "127.0.0.1", resolve);
    });
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get address(): PacerAddress {
    return { url: this.url, token: this.token };
  }

  /** What a shard's workspace adds to its environment so its provider takes turns here. */
  get env(): Record<string, string> {
    return { [PACER_ENV.url]: this.url, [PACER_ENV.token]: this.token };
  }

  get perMinute(): number {
    return this.spaced.perMinute;
  }

  get waiting(): number {
    return this.spaced.waiting;
  }

  async take(signal?: AbortSignal): Promise<void> {
    await this.spaced.take(signal);
    const now = performance.now();
    this.firstAt ??= now;
    this.lastAt = now;
    this.given += 1;
  }

  now(): PaceNow {
    const now = performance.now();
    // Before a whole window has passed, the turns so far stand for a minute's.
    const span = Math.min(WINDOW_MS, now - (this.firstAt ?? now));
    const given = this.spaced.givenInWindow(now);
    const inUse = span < 1_000 ? 0 : Math.min(this.perMinute, (given * WINDOW_MS) / span);
    return { perMinute: this.perMinute, inUse: Math.round(inUse), waiting: this.waiting };
  }

  use(): PaceUse {
    const seconds = this.firstAt === undefined || this.lastAt === undefined ? 0 : (this.lastAt - this.firstAt) / 1000;
    const share = this.given < 2 || seconds === 0 ? undefined : (this.given - 1) / ((seconds / 60) * this.perMinute);
    return { perMinute: this.perMinute, requests: this.given, seconds, share };
  }

  /** Refuses the turns still waiting and stops listening. */
  async close(): Promise<void> {
    this.spaced.close(new Error("the fleet run has ended"));
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private answer(request: IncomingMessage, response: ServerResponse): void {
    request.resume();
    if (request.method !== "POST" || request.url !== TURN_PATH) return void response.writeHead(404).end();
    if (!this.admits(request.headers.authorization)) return void response.writeHead(401).end();
    // A process that dies while it waits closes its connection: its turn goes to the next in line.
    const gone = new AbortController();
    response.on("close", () => gone.abort(new Error("the process asking went away")));
    this.take(gone.signal).then(
      () => {
        const answer: TurnAnswer = { perMinute: this.perMinute, waiting: this.waiting };
        response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
      },
      () => {
        if (!response.destroyed) response.writeHead(503).end();
      },
    );
  }

  private admits(authorization: string | undefined): boolean {
    const given = Buffer.from(authorization ?? "");
    const expected = Buffer.from(`Bearer ${this.token}`);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}

/**
 * The fleet's pace for all shards and the runner together, in requests a
 * minute: the one a client with the fleet's settings paces at
 * (`dmarc:requestsPerMinute`, else the default for the address); undefined
 * when unpaced.
 */
export function fleetPace(options: Pick<FleetOptions, "config">): Pacing | undefined {
  const pacing = pacingFor(clientOptionsFrom(settingsOf(options)));
  return pacing.requestsPerMinute > 0 ? pacing : undefined;
}

/**
 * Holds a pacer at the fleet's pace while `work` runs, and every request of
 * this process takes its turn from it; with `listen`, on a loopback port too,
 * for the shards' providers. None when the fleet is unpaced.
 */
export async function withFleetPacer<T>(
  options: Pick<FleetOptions, "config">,
  listen: boolean,
  work: (pacer: FleetPacer | undefined) => Promise<T>,
): Promise<T> {
  const pace = fleetPace(options);
  if (pace === undefined) return work(undefined);
  const pacer = listen ? await startFleetPacer(pace.requestsPerMinute) : new FleetPacer(pace.requestsPerMinute);
  takeTurnsFrom(pacer, "the fleet's pacer");
  try {
    return await work(pacer);
  } finally {
    takeTurnsFrom(undefined);
    await pacer.close();
  }
}

/** A pacer listening on a loopback port; close it when the run ends. */
export async function startFleetPacer(perMinute: number): Promise<FleetPacer> {
  const pacer = new FleetPacer(perMinute);
  await pacer.start();
  return pacer;
}

/** How often the progress says the fleet's pace and how much of it is in use. */
const PACE_LINE_INTERVAL_MS = 30_000;

/** Says now and then, while the shards run, the pace and its use: `requests: 57/min of 57 in use, 12 waiting`. */
export function paceLines(pacer: FleetPacer, progress: ProgressSink): () => void {
  const timer = setInterval(() => {
    const { perMinute, inUse, waiting } = pacer.now();
    if (inUse > 0 || waiting > 0) {
      progress.note("requests", `${inUse}/min of ${formatRate(perMinute)} in use, ${waiting} waiting`);
    }
  }, PACE_LINE_INTERVAL_MS).unref();
  return () => clearInterval(timer);
}

/** What the run's pacer counted: the pace's use, and the requests per tenant of the shards that ran. */
export function paceOf(
  pacer: FleetPacer,
  results: readonly ShardResult[],
): { pace: PaceUse; requestsPerTenant?: number } {
  const pace = pacer.use();
  const tenants = results.reduce((sum, result) => sum + result.tenants, 0);
  return { pace, ...(tenants > 0 ? { requestsPerTenant: Math.round((pace.requests / tenants) * 100) / 100 } : {}) };
}
