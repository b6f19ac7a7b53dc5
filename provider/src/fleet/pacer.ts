import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Writable } from "node:stream";
import {
  AdaptiveRate,
  BookedTurns,
  type BudgetChoice,
  type BudgetKind,
  budgetEvents,
  budgetStoreFor,
  formatRate,
  type PacerAddress,
  type Pacing,
  pacingFor,
  REFUSED_PATH,
  SpacedTurns,
  TURN_PATH,
  type TurnAnswer,
  type TurnSource,
  takeTurnsFrom,
  WINDOW_MS,
} from "../client";
import { clientOptionsFrom, PACER_ENV, type ProviderSettings } from "../runtime/config";
import type { ProgressSink } from "./progress";
import type { ShardResult } from "./result";

// The fleet's one request budget, live: a pacer the runner holds for the run,
// on a loopback port of its own, from which every shard's provider process
// (through its environment, PACER_ENV) and the runner itself take every
// request's turn. While any of them has a request waiting the fleet sends at
// the full pace, never above; a shard that starts, ends or dies changes
// nothing for the others, since the pacer counts turns, not shards. The
// pacer books its turns in the partner's budget store when there is one
// (a PostgreSQL database the CI jobs share, else this machine's folder), so
// other runs of the partner keep to the same pace; a 429 any shard meets
// slows it down for all, and it climbs back slowly.

/** Where a run's pace was shared, and what the service's refusals made of it. */
export interface PaceBudget {
  kind: BudgetKind;
  /** The store, in words (never a password); for "adaptive", that the run paced alone. */
  where: string;
  /** 429 answers the run's processes met. */
  refusals: number;
  /** The pace at the run's end, lowered by refusals and climbing back. */
  endPerMinute: number;
}

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
  budget: PaceBudget;
}

/** The pacer now: its pace, the turns it gave in the last minute (as a rate), and the turns waiting. */
export interface PaceNow {
  perMinute: number;
  inUse: number;
  waiting: number;
}

export class FleetPacer implements TurnSource {
  private readonly adaptive: AdaptiveRate;
  private readonly turns: SpacedTurns | BookedTurns;
  private readonly token = randomBytes(32).toString("base64url");
  private readonly server: Server;
  private readonly givenAt: number[] = [];
  private firstAt: number | undefined;
  private lastAt: number | undefined;
  private given = 0;
  private refusals = 0;
  private url = "";
  /** The pacer's routes: a turn, and news of a refusal. */
  private readonly routes: Record<string, (response: ServerResponse) => void> = {
    [TURN_PATH]: (response) => this.giveTurn(response),
    [REFUSED_PATH]: (response) => {
      this.refused();
      response.writeHead(204).end();
    },
  };

  /** @param pace the fleet's pace, for every shard and the runner together, and the budget it books in. */
  constructor(
    private readonly pace: Pick<Pacing, "requestsPerMinute" | "budget" | "windowMs">,
    private readonly notice: (line: string) => void = () => {},
  ) {
    this.adaptive = new AdaptiveRate(pace.requestsPerMinute, pace.windowMs);
    const store = budgetStoreFor(pace.budget);
    this.turns = store
      ? new BookedTurns(store, this.adaptive, budgetEvents(store, this.notice), pace.windowMs)
      : new SpacedTurns(pace.requestsPerMinute, pace.windowMs);
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

  /** The fleet's pace as configured; refusals lower the pace in use below it for a while. */
  get perMinute(): number {
    return this.pace.requestsPerMinute;
  }

  get waiting(): number {
    return this.turns.waiting;
  }

  /** Where the pace is shared now: the store (while it answers), or this run alone. */
  get budget(): Pick<PaceBudget, "kind" | "where"> {
    return this.turns instanceof BookedTurns && this.turns.shared
      ? { kind: this.turns.store.kind, where: this.turns.store.where }
      : { kind: "adaptive", where: "this run alone, slowing down on the service's refusals" };
  }

  async take(signal?: AbortSignal): Promise<void> {
    await this.turns.take(signal);
    const now = performance.now();
    this.firstAt ??= now;
    this.lastAt = now;
    this.given += 1;
    this.givenAt.push(now);
    if (this.adaptive.given(now)) this.followRate();
  }

  /** A 429, met by the runner or a shard's provider: the whole fleet slows down. */
  refused(): void {
    this.refusals += 1;
    this.adaptive.refused();
    this.followRate();
  }

  now(): PaceNow {
    const now = performance.now();
    while ((this.givenAt[0] ?? now) <= now - WINDOW_MS) this.givenAt.shift();
    // Before a whole window has passed, the turns so far stand for a minute's.
    const span = Math.min(WINDOW_MS, now - (this.firstAt ?? now));
    const inUse = span < 1_000 ? 0 : Math.min(this.perMinute, (this.givenAt.length * WINDOW_MS) / span);
    return { perMinute: this.adaptive.perMinute, inUse: Math.round(inUse), waiting: this.waiting };
  }

  use(): PaceUse {
    const seconds = this.firstAt === undefined || this.lastAt === undefined ? 0 : (this.lastAt - this.firstAt) / 1000;
    const share = this.given < 2 || seconds === 0 ? undefined : (this.given - 1) / ((seconds / 60) * this.perMinute);
    const budget = {
      ...this.budget,
      refusals: this.refusals,
      endPerMinute: Math.round(this.adaptive.perMinute * 100) / 100,
    };
    return { perMinute: this.perMinute, requests: this.given, seconds, share, budget };
  }

  /** Refuses the turns still waiting and stops listening. */
  async close(): Promise<void> {
    this.turns.close(new Error("the fleet run has ended"));
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private followRate(): void {
    if (this.turns instanceof SpacedTurns) {
      this.turns.setRate(this.adaptive.perMinute);
      this.turns.holdUntil(this.adaptive.heldUntil);
    } else this.turns.rateChanged();
  }

  private answer(request: IncomingMessage, response: ServerResponse): void {
    request.resume();
    const route = request.method === "POST" ? this.routes[request.url ?? ""] : undefined;
    if (route === undefined) return void response.writeHead(404).end();
    if (!this.admits(request.headers.authorization)) return void response.writeHead(401).end();
    route(response);
  }

  private giveTurn(response: ServerResponse): void {
    // A process that dies while it waits closes its connection: its turn goes to the next in line.
    const gone = new AbortController();
    response.on("close", () => gone.abort(new Error("the process asking went away")));
    this.take(gone.signal).then(
      () => {
        const answer: TurnAnswer = { perMinute: this.adaptive.perMinute, waiting: this.waiting };
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
export function fleetPace(settings: ProviderSettings): Pacing | undefined {
  const pacing = pacingFor(clientOptionsFrom(settings));
  return pacing.requestsPerMinute > 0 ? pacing : undefined;
}

/**
 * Holds a pacer at the fleet's pace while `work` runs, and every request of
 * this process takes its turn from it; with `listen`, on a loopback port too,
 * for the shards' providers. None when the fleet is unpaced.
 */
export async function withFleetPacer<T>(
  settings: ProviderSettings,
  progress: Writable,
  listen: boolean,
  work: (pacer: FleetPacer | undefined) => Promise<T>,
): Promise<T> {
  const pace = fleetPace(settings);
  if (pace === undefined) return work(undefined);
  const notice = (line: string) => progress.write(`${line}\n`);
  const pacer = new FleetPacer(pace, notice);
  if (listen) await pacer.start();
  takeTurnsFrom(pacer, "the fleet's pacer");
  try {
    return await work(pacer);
  } finally {
    takeTurnsFrom(undefined);
    await pacer.close();
  }
}

/**
 * A pacer listening on a loopback port; close it when the run ends. It
 * books in `budget` when given one, and spaces its turns itself otherwise.
 */
export async function startFleetPacer(perMinute: number, budget?: BudgetChoice): Promise<FleetPacer> {
  const pacer = new FleetPacer({
    requestsPerMinute: perMinute,
    budget: budget ?? { setting: "off", partner: "" },
    windowMs: WINDOW_MS,
  });
  await pacer.start();
  return pacer;
}

/** Where the run's pace is shared, as the progress says it. */
const BUDGET_WORDS: Record<BudgetKind, (where: string) => string> = {
  postgres: (where) => `booked in ${where} with every run and CI job of this partner`,
  machine: (where) => `booked in ${where} with every run of this partner on this machine`,
  adaptive: () => "paced alone (no budget store): slowing down on the service's 429s",
};

export function budgetWords(pacer: FleetPacer): string {
  const { kind, where } = pacer.budget;
  return BUDGET_WORDS[kind](where);
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
