import { noticeLine } from "../notice";
import { CLIENT_DEFAULTS } from "../options";
import { redact } from "../redaction";
import { AdaptiveRate } from "./adaptive";
import { BookedTurns, type BudgetEvents } from "./bookedTurns";
import { type BudgetChoice, budgetStoreFor } from "./budgetChoice";
import type { BudgetStore } from "./budgetStore";
import { SpacedTurns, type TurnSource, WINDOW_MS } from "./turns";

// Keeps a large deployment under the service's rate limit instead of bouncing
// off 429 answers: requests are spaced evenly at the configured rate, and no
// more than a set number are in flight. One pacer serves the whole process,
// because the service counts the partner's requests, not one client's; it
// takes its turns from a pacer shared with other processes when it is given
// one (takeTurnsFrom), else books them in the partner's budget store, which
// every run of the partner books in (./budgetStore.ts), else spaces them
// itself. Whichever it is, a 429 lowers the rate and it climbs back slowly
// (./adaptive.ts).

export interface PacingSettings {
  /** 0 sends as fast as the cap on requests in flight allows. */
  requestsPerMinute: number;
  maxConcurrency: number;
  /** Where the rate comes from, in words. */
  source: string;
  /** Receives the line that says requests are waiting their turn. */
  notice: (line: string) => void;
  /** Where the partner's runs share their budget; none: the process spaces its own turns. */
  budget?: BudgetChoice | undefined;
  /** The window the service counts its limit over, in milliseconds; unset, the published minute. */
  windowMs?: number | undefined;
}

/**
 * Requests held this long by the pacing get a line saying so, and another at most this often: at the
 * published minute's window, stretched or shrunk with the service's.
 */
const PACING_NOTICE_INTERVAL_MS = 30_000;

/** Turns from a pacer other processes share, and its name in the lines that say why a run waits. */
interface SharedTurns {
  turns: TurnSource;
  source: string;
}

export class Pacer {
  private settings: PacingSettings;
  private active = 0;
  private readonly waiting: Array<{ resolve: () => void; reject: (reason: Error) => void }> = [];
  private stopped: Error | undefined;
  private readonly adaptive: AdaptiveRate;
  private local: SpacedTurns | BookedTurns;
  private localKey = "";
  private shared: SharedTurns | undefined;
  /** Callers holding a slot and waiting for their turn. */
  private spacing = 0;
  private noticeTimer: NodeJS.Timeout | undefined;
  private started = 0;

  constructor(settings: PacingSettings) {
    this.settings = { ...settings };
    this.adaptive = new AdaptiveRate(settings.requestsPerMinute, windowOf(settings));
    this.local = this.ownTurns();
  }

  /** Requests this process has started: every attempt, redirect and token request, as the service counts them. */
  get requestsStarted(): number {
    return this.started;
  }

  /** Requests holding a slot: sent and not yet answered, or waiting for their turn. */
  get slotsHeld(): number {
    return this.active;
  }

  configure(changes: Partial<PacingSettings>): void {
    this.settings = { ...this.settings, ...changes };
    this.adaptive.setCeiling(this.settings.requestsPerMinute, windowOf(this.settings));
    if (ownTurnsKey(this.settings) !== this.localKey) this.local = this.ownTurns();
    this.followRate();
    this.wakeWaiters();
  }

  /**
   * The service refused a request for its rate: the process (or the pacer
   * it shares, which then slows every process taking turns from it) lowers
   * its rate for a while.
   */
  refused(): void {
    const shared = this.shared;
    if (shared) shared.turns.refused?.();
    else {
      this.adaptive.refused();
      this.followRate();
    }
  }

  /** The process's own turns: booked in the partner's budget store when the settings name one and it paces, else spaced here. */
  private ownTurns(): SpacedTurns | BookedTurns {
    this.localKey = ownTurnsKey(this.settings);
    const { budget, requestsPerMinute } = this.settings;
    const store = budget && requestsPerMinute > 0 ? budgetStoreFor(budget) : undefined;
    if (store === undefined) return new SpacedTurns(this.adaptive.perMinute, windowOf(this.settings));
    return new BookedTurns(
      store,
      this.adaptive,
      budgetEvents(store, (line) => this.settings.notice(noticeLine(line))),
      windowOf(this.settings),
    );
  }

  private followRate(): void {
    if (this.local instanceof SpacedTurns) {
      this.local.setRate(this.adaptive.perMinute);
      this.local.holdUntil(this.adaptive.heldUntil);
    } else this.local.rateChanged();
  }

  /**
   * Every request of the process takes its turn from `turns` (named `source`
   * in the lines that say why a run waits) instead of its own spacing;
   * undefined goes back to its own. Should `turns` fail, the process says
   * so once and paces itself at its configured rate.
   */
  takeTurnsFrom(turns: TurnSource | undefined, source = "a shared pacer"): void {
    this.shared = turns === undefined ? undefined : { turns, source };
  }

  /** Waits for a free slot and the next turn; the caller must call the returned release once. */
  async acquire(): Promise<() => void> {
    if (this.stopped) throw this.stopped;
    if (this.active < this.settings.maxConcurrency && this.waiting.length === 0) this.active += 1;
    // A woken waiter finds its slot already counted by wakeWaiters, so first come is first served.
    else await new Promise<void>((resolve, reject) => this.waiting.push({ resolve, reject }));
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.active -= 1;
      this.wakeWaiters();
    };
    try {
      await this.takeTurn();
    } catch (error) {
      release();
      throw error;
    }
    this.started += 1;
    return release;
  }

  private wakeWaiters(): void {
    while (this.waiting.length > 0 && this.active < this.settings.maxConcurrency) {
      this.active += 1;
      this.waiting.shift()?.resolve();
    }
  }

  private async takeTurn(): Promise<void> {
    if (this.spacing === 0) {
      const interval = (PACING_NOTICE_INTERVAL_MS * windowOf(this.settings)) / WINDOW_MS;
      this.noticeTimer = setInterval(() => this.sayWhoWaits(), interval).unref();
    }
    this.spacing += 1;
    try {
      await this.turnFromSharedOrOwn();
    } finally {
      this.spacing -= 1;
      if (this.spacing === 0) clearInterval(this.noticeTimer);
    }
  }

  /**
   * Sends nothing more: every request waiting for a slot or a turn fails
   * with `reason`, and so does every later one; requests already sent
   * finish. For a process whose work can no longer count (its engine gone).
   */
  stop(reason: Error): void {
    this.stopped = reason;
    for (const waiter of this.waiting.splice(0)) waiter.reject(reason);
    this.local.close(reason);
  }

  private async turnFromSharedOrOwn(): Promise<void> {
    if (this.stopped) throw this.stopped;
    const shared = this.shared;
    if (shared === undefined) {
      await this.local.take();
      if (this.adaptive.given()) this.followRate();
      return;
    }
    try {
      return await shared.turns.take();
    } catch (error) {
      // Only the first failure says so; the requests that waited with it go on at the process's own pace too.
      if (this.shared === shared) {
        this.shared = undefined;
        this.settings.notice(
          noticeLine(
            `${shared.source} cannot be reached (${error instanceof Error ? error.message : String(error)}): ` +
              `pacing at ${formatRate(this.settings.requestsPerMinute)} requests a minute (${this.settings.source}) instead`,
          ),
        );
      }
      if (this.stopped) throw this.stopped;
      await this.local.take();
    }
  }

  /** A run held back by its pacing says so now and then, so a slow run is not taken for a stuck one. */
  private sayWhoWaits(): void {
    const { turns, source } = this.shared ?? { turns: this.local, source: this.settings.source };
    const rate = turns.perMinute;
    if (rate <= 0) return;
    const queued = this.shared ? turns.waiting : this.spacing + this.waiting.length;
    const seconds = Math.ceil((queued * 60) / rate);
    this.settings.notice(
      noticeLine(
        `pacing at ${formatRate(rate)} requests a minute (${source}): ` +
          `${queued === 1 ? "1 request waiting its turn" : `${queued} requests waiting their turn`}, about ${seconds} s of sending ahead`,
      ),
    );
  }
}

/** What decides a process's own turns besides its rate: the store it books in, and the service's window. */
function ownTurnsKey(settings: PacingSettings): string {
  const store =
    settings.budget && settings.requestsPerMinute > 0 ? `${settings.budget.setting}\n${settings.budget.partner}` : "";
  return `${windowOf(settings)}\n${store}`;
}

/** The service's window the settings name, else the published minute. */
function windowOf(settings: PacingSettings): number {
  return settings.windowMs ?? WINDOW_MS;
}

/**
 * The lines a process says when its budget store is lost and when it
 * answers again, one each: the store by its name, never a credential.
 */
export function budgetEvents(store: BudgetStore, say: (line: string) => void): BudgetEvents {
  return {
    lost: (error, perMinute) =>
      say(
        `the budget at ${store.where} cannot be used (${redact(error instanceof Error ? error.message : String(error))}): ` +
          `pacing alone at ${formatRate(perMinute)} requests a minute, the share this process had, and trying it again`,
      ),
    rejoined: () => say(`the budget at ${store.where} answers again: booking in it again`),
  };
}

/** A rate as people read it: whole numbers bare, others to at most two decimals (28.5, 17.33). */
export function formatRate(perMinute: number): string {
  return Number.isInteger(perMinute) ? String(perMinute) : String(Number(perMinute.toFixed(2)));
}

export const sharedPacer = new Pacer({
  requestsPerMinute: 0,
  maxConcurrency: CLIENT_DEFAULTS.maxConcurrency,
  source: "no client created yet",
  notice: () => {},
});
