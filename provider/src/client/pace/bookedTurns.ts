import { setTimeout as sleep } from "node:timers/promises";
import { type AdaptiveRate, SHARE_MARGIN } from "./adaptive";
import type { BudgetStore } from "./budgetStore";
import { MINUTE_MS, SpacedTurns, type TurnSource, type TurnWaiter, WINDOW_MS } from "./turns";

// Turns booked in a store the partner's other runs book in too
// (./budgetStore.ts). A process books one turn at a time, for whoever waits
// first when it comes: the runs that want turns then take them in turn, and
// a run that dies holds no more than the one it booked.
//
// A store that fails (a database restarted, failed over, out of reach for a
// moment) must not turn into refusals: the process spaces its own turns at
// the rate its bookings came at over the last window, its share of the
// budget (a little under, as the adaptive rule keeps to a measured share),
// as the AWS SDKs' adaptive mode starts from its measured sending rate. The
// adaptive rule lowers it further on a 429, and it climbs back no higher
// than that share, as it cannot tell whether the others' have shrunk. While
// it spaces its own turns it tries the store again now and then, backing
// off, and books in it again once a booking succeeds, at the rate it had
// before, so the run ends under one budget again.

/**
 * The first wait before the store is tried again; each failed try doubles
 * it, up to RETRY_AT_MOST_MS. A try is made at the next multiple of the wait
 * on the clock, so that runs that lost the store together (the jobs of a
 * matrix, on machines whose clocks agree within a moment) try it at the same
 * moments and book in it again together: a run back in the store while the
 * others still pace alone would take its whole rate on top of their shares.
 */
const FIRST_RETRY_MS = 250;
const RETRY_AT_MOST_MS = 2_000;
/**
 * How long a run back in the store still keeps to its own spacing as well:
 * long enough for the others to have tried the store twice since. A run
 * that books in the store again while another's try failed (a server still
 * starting) would otherwise take the whole rate on top of that run's share.
 */
const REJOINED_SETTLING_MS = 2 * RETRY_AT_MOST_MS;
/** Fewer of its own bookings in the window than this measure nothing: the process starts from the adaptive floor. */
const MEASURED_AT_LEAST = 10;

/** What a process hears of its store: that it was lost (and the pace it keeps alone), and that it answers again. */
export interface BudgetEvents {
  lost(error: unknown, perMinute: number): void;
  rejoined(): void;
}

/** The store while it is lost: the rate to book at again, and when it is tried next (Date.now()). */
interface Lost {
  rateBefore: number;
  retryMs: number;
  retryAt: number;
  trying: boolean;
}

/** Sleeps until `time` (performance.now()): a timer counts from the loop's clock, which may lag, and can fire early. */
async function sleepUntil(time: number): Promise<void> {
  for (let left = time - performance.now(); left > 0; left = time - performance.now()) await sleep(left);
}

/** The next multiple of `retryMs` on the clock. */
function nextTry(retryMs: number): number {
  return (Math.floor(Date.now() / retryMs) + 1) * retryMs;
}

export class BookedTurns implements TurnSource {
  private readonly queue: TurnWaiter[] = [];
  private booking = false;
  private closed: Error | undefined;
  /** The process's own spacing, used while the store is lost. */
  private readonly ownSpacing: SpacedTurns;
  private lost: Lost | undefined;
  /** Until when (performance.now()) a turn booked in the store waits for the own spacing too, since it answered again. */
  private settlingUntil = Number.NEGATIVE_INFINITY;
  /** When the turns booked since the store last answered again came, within the last window, oldest first. */
  private readonly bookedAt: number[] = [];
  /** When this process last gave a turn booked in the store (performance.now()). */
  private lastGivenAt = Number.NEGATIVE_INFINITY;

  /**
   * @param rate this process's rate now (its configured one, lowered after refusals)
   * @param windowMs the window the service counts its limit over, which the share is measured over
   */
  constructor(
    readonly store: BudgetStore,
    private readonly rate: AdaptiveRate,
    private readonly events: BudgetEvents,
    private readonly windowMs = WINDOW_MS,
  ) {
    this.ownSpacing = new SpacedTurns(0, windowMs);
  }

  get perMinute(): number {
    return this.rate.perMinute;
  }

  get waiting(): number {
    return this.queue.length;
  }

  /** Whether turns come from the store now (not from the process's own spacing while it is lost). */
  get shared(): boolean {
    return this.lost === undefined;
  }

  take(signal?: AbortSignal): Promise<void> {
    if (this.closed) return Promise.reject(this.closed);
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const waiter: TurnWaiter = { resolve, reject, signal, onAbort: () => this.drop(waiter, signal?.reason) };
      signal?.addEventListener("abort", waiter.onAbort, { once: true });
      this.queue.push(waiter);
      void this.giveWhileWaited();
    });
  }

  /** Refuses the turns waiting; the store stays open for the process's other users. */
  close(reason: Error): void {
    this.closed = reason;
    for (const waiter of [...this.queue]) this.drop(waiter, reason);
    this.ownSpacing.close(reason);
  }

  /** The process's own spacing follows its rate and holds while the store is lost. */
  rateChanged(): void {
    if (this.lost === undefined) return;
    this.ownSpacing.setRate(this.rate.perMinute);
    this.ownSpacing.holdUntil(this.rate.heldUntil);
  }

  private drop(waiter: TurnWaiter, reason: unknown): void {
    const index = this.queue.indexOf(waiter);
    if (index < 0) return;
    this.queue.splice(index, 1);
    waiter.signal?.removeEventListener("abort", waiter.onAbort);
    waiter.reject(reason);
  }

  private async giveWhileWaited(): Promise<void> {
    if (this.booking) return;
    this.booking = true;
    try {
      while (this.queue.length > 0 && !this.closed) {
        await this.nextTurn();
        // A turn nobody waits for any more is lost: the next is booked only when wanted.
        const waiter = this.queue.shift();
        if (waiter === undefined) continue;
        waiter.signal?.removeEventListener("abort", waiter.onAbort);
        waiter.resolve();
      }
    } catch {
      // Only a close ends the own spacing's turn early; its waiters were refused with the reason.
    } finally {
      this.booking = false;
    }
  }

  /** Waits for the next turn: booked in the store, or spaced here while the store is lost. */
  private async nextTurn(): Promise<void> {
    if (this.lost) {
      this.tryStoreWhenDue(this.lost);
      return this.ownSpacing.take();
    }
    // Just back in the store, the own spacing first and the booking after it: a turn booked first and
    // given later would leave the store behind the turns really given, and it would give the next ones
    // at once.
    if (performance.now() < this.settlingUntil) await this.ownSpacing.take();
    // A refusal's hold: the turn is booked only once it is over, so the hold costs the others nothing.
    const held = this.rate.heldUntil - performance.now();
    if (held > 0) await sleep(held);
    let wait: number;
    try {
      wait = await this.store.book(MINUTE_MS / this.rate.perMinute);
    } catch (error) {
      this.loseStore(error);
      return this.ownSpacing.take();
    }
    // The moments turns are really given are spaced too, as SpacedTurns spaces them: a turn given late (a
    // timer that fired late on a busy machine) holds the next one an interval after it, instead of giving
    // that one at its booked moment right after and the two requests closer than the rate allows.
    const interval = MINUTE_MS / this.rate.perMinute;
    await sleepUntil(Math.max(performance.now() + wait, this.lastGivenAt + interval));
    this.lastGivenAt = performance.now();
    this.bookedAt.push(this.lastGivenAt);
  }

  private loseStore(error: unknown): void {
    const now = performance.now();
    this.lost = {
      rateBefore: this.rate.perMinute,
      retryMs: FIRST_RETRY_MS,
      retryAt: nextTry(FIRST_RETRY_MS),
      trying: false,
    };
    const lastBookedAt = this.bookedAt.at(-1) ?? now;
    this.rate.keepTo(Math.min(this.rate.perMinute, SHARE_MARGIN * this.measuredRate(now)), now);
    this.bookedAt.length = 0;
    this.rateChanged();
    // The first turn of its own comes an interval after the last it booked, and at a moment of its own
    // within an interval: runs whose store failed them all at once (a server going down holds their
    // bookings until it is gone) would otherwise give their turns together, and a window would hold
    // one more of each at its edges.
    const interval = MINUTE_MS / this.rate.perMinute;
    this.ownSpacing.holdUntil(Math.max(lastBookedAt + interval, now + Math.random() * interval));
    this.events.lost(error, this.rate.perMinute);
  }

  /**
   * The rate the process's bookings came at over the last window, in
   * requests a minute; 0 before it has booked enough to tell, which starts
   * it at the adaptive floor: a process that cannot tell its share takes the least.
   */
  private measuredRate(now: number): number {
    while ((this.bookedAt[0] ?? now) <= now - this.windowMs) this.bookedAt.shift();
    const first = this.bookedAt[0];
    if (this.bookedAt.length < MEASURED_AT_LEAST || first === undefined || now <= first) return 0;
    return ((this.bookedAt.length - 1) * MINUTE_MS) / (now - first);
  }

  /**
   * Tries the store once the backoff has passed, beside the own spacing so
   * that a store slow to fail holds no turn back. The turn a successful try
   * books goes unused: one turn of the budget per outage.
   */
  private tryStoreWhenDue(lost: Lost): void {
    if (lost.trying || Date.now() < lost.retryAt) return;
    lost.trying = true;
    this.store.book(MINUTE_MS / lost.rateBefore).then(
      () => this.rejoin(lost),
      () => {
        lost.trying = false;
        lost.retryMs = Math.min(RETRY_AT_MOST_MS, 2 * lost.retryMs);
        lost.retryAt = nextTry(lost.retryMs);
      },
    );
  }

  private rejoin(lost: Lost): void {
    if (this.lost !== lost || this.closed) return;
    this.lost = undefined;
    this.settlingUntil = performance.now() + REJOINED_SETTLING_MS;
    this.rate.restartAt(lost.rateBefore);
    this.events.rejoined();
  }
}
