// When a request may start. One process spaces its own requests
// (SpacedTurns); processes that share the partner's budget take their turns
// from one pacer they all reach (RemoteTurns, ./remoteTurns.ts), which
// spaces them with a SpacedTurns of its own. Either way the service's window
// sees one evenly spaced stream.

/** The length of the window the service counts its limit over, unless rateLimitWindowSeconds says otherwise. */
export const WINDOW_MS = 60_000;

/** What a rate's "a minute" means, whatever the window. */
export const MINUTE_MS = 60_000;

/** A source of turns: each request of the process waits for one before it starts. */
export interface TurnSource {
  /** Resolves at the moment the next request may start; rejects when `signal` aborts first. */
  take(signal?: AbortSignal): Promise<void>;
  /** The pace turns are given at, in requests a minute; 0 for no pacing. */
  readonly perMinute: number;
  /** Turns waited for right now. */
  readonly waiting: number;
  /** The service refused a request for its rate: a source that adapts slows down. */
  refused?(): void;
}

/** A request waiting for its turn, which leaves the queue when its signal aborts. */
export interface TurnWaiter {
  resolve: () => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

/**
 * Turns spaced evenly at a rate, first come first served, and never more
 * than the rate within any window: the moments turns are really given are
 * spaced, not the moments they were booked for, so timers that fire late on
 * a busy machine stretch the gaps instead of bunching the requests after
 * them. A waiter that gives up (its request's process went away) leaves the
 * queue without taking a turn.
 */
export class SpacedTurns implements TurnSource {
  private readonly queue: TurnWaiter[] = [];
  /** When turns were given within the last window, oldest first. */
  private readonly given: number[] = [];
  private lastGivenAt = Number.NEGATIVE_INFINITY;
  private heldUntil = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;

  /**
   * @param rate requests a minute; 0 gives every turn at once.
   * @param windowMs the window the service counts its limit over: no more than the rate's share of it in any.
   */
  constructor(
    private rate: number,
    private readonly windowMs = WINDOW_MS,
  ) {}

  get perMinute(): number {
    return this.rate;
  }

  get waiting(): number {
    return this.queue.length;
  }

  /** Turns given within the last window, as of `now` (performance.now()). */
  givenInWindow(now = performance.now()): number {
    this.forgetBefore(now - this.windowMs);
    return this.given.length;
  }

  setRate(rate: number): void {
    this.rate = rate;
    this.giveDue();
  }

  /** Gives no turn before `until` (performance.now()); the turns after it are spaced as ever. */
  holdUntil(until: number): void {
    this.heldUntil = Math.max(this.heldUntil, until);
    this.giveDue();
  }

  take(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const waiter: TurnWaiter = { resolve, reject, signal, onAbort: () => this.drop(waiter) };
      signal?.addEventListener("abort", waiter.onAbort, { once: true });
      this.queue.push(waiter);
      this.giveDue();
    });
  }

  /** Stops giving turns: every waiter is refused with `reason`. */
  close(reason: Error): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const waiter of this.queue.splice(0)) this.settle(waiter, () => waiter.reject(reason));
  }

  private drop(waiter: TurnWaiter): void {
    const index = this.queue.indexOf(waiter);
    if (index < 0) return;
    this.queue.splice(index, 1);
    waiter.reject(waiter.signal?.reason);
  }

  private settle(waiter: TurnWaiter, outcome: () => void): void {
    waiter.signal?.removeEventListener("abort", waiter.onAbort);
    outcome();
  }

  /** Gives every turn that is due now, then sleeps until the next one is. */
  private giveDue(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (;;) {
      const waiter = this.queue[0];
      if (waiter === undefined) return;
      const now = performance.now();
      const wait = this.msUntilNextTurn(now);
      if (wait > 0) {
        this.timer = setTimeout(() => this.giveDue(), wait);
        return;
      }
      this.queue.shift();
      if (this.rate > 0) {
        this.lastGivenAt = now;
        this.given.push(now);
      }
      this.settle(waiter, waiter.resolve);
    }
  }

  private msUntilNextTurn(now: number): number {
    if (this.rate <= 0) return 0;
    if (this.heldUntil > now) return this.heldUntil - now;
    const spaced = this.lastGivenAt + MINUTE_MS / this.rate - now;
    this.forgetBefore(now - this.windowMs);
    // The window's own count matters when the rate was just lowered: the spacing alone would allow more.
    const oldest = this.given[0];
    const windowFull = this.given.length >= Math.floor((this.rate * this.windowMs) / MINUTE_MS) && oldest !== undefined;
    return Math.max(spaced, windowFull ? oldest + this.windowMs - now : 0);
  }

  private forgetBefore(time: number): void {
    while ((this.given[0] ?? Number.POSITIVE_INFINITY) <= time) this.given.shift();
  }
}
