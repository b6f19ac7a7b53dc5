import { MINUTE_MS, WINDOW_MS } from "./turns";

// The floor of every pacing: a process that shares no budget with the
// others of its partner (or shares one with a script that does not) still
// meets them at the service's limit, and only learns so from its 429s. As
// TCP does, it then slows down at once and climbs back slowly, so runs that
// cannot see each other converge on sharing the limit instead of taking
// turns at refusals. How far down: as the AWS SDKs' adaptive mode does, to
// what it measured itself sending, here the requests of its own that the
// service's window held when it refused, which is this run's share of the
// limit. A refusal also holds every turn for a moment, doubled while
// refusals follow each other (TCP's retransmission backoff): runs that
// overshot together filled the window for the rest of it, and whatever
// they send before it slides on is refused. Its times below are those of the
// published minute's window; a service with another window (the client's
// rateLimitWindowSeconds) stretches or shrinks them with it, so a window a
// tenth as long is the same pacing ten times faster.

/** The rate after a refusal without enough of its own requests to measure, as a share of the rate before it (TCP CUBIC's 0.7). */
const DECREASE = 0.7;
/** Fewer of its own requests in the window than this measure nothing: the rate falls by DECREASE instead. */
const MEASURED_AT_LEAST = 10;
/** The measured share is kept to with this margin, as the configured rate keeps 5% of the published limit. */
export const SHARE_MARGIN = 0.95;
/** A refusal always lowers the rate at least this far. */
const DECREASE_AT_LEAST = 0.9;
/** How fast the rate climbs back while turns are taken, as a share of the ceiling a minute. */
const INCREASE_PER_MINUTE = 0.1;
/** The lowest rate, as a share of the ceiling: refusals that another client causes never stop this one. */
const FLOOR = 0.1;
/** The first hold after a refusal; each refusal that follows within twice the hold doubles it. */
const FIRST_HOLD_MS = 2_000;
/** No hold is longer than the service's window, after which every refusal before it is forgotten. */
const LONGEST_HOLD_MS = 60_000;
/** One refusal lowers the rate once: the refusals of requests sent before it are the same news. */
const REFUSALS_PER_DECREASE_INTERVALS = 3;
const MIN_COOLDOWN_MS = 2_000;

export class AdaptiveRate {
  private rate: number;
  /** The most the rate climbs back to: the ceiling, or a share it is kept to (keepTo). */
  private top: number;
  private lastIncreaseAt: number | undefined;
  private quietUntil = Number.NEGATIVE_INFINITY;
  private decreases = 0;
  private hold = 0;
  private lastRefusalAt = Number.NEGATIVE_INFINITY;
  private heldUntilAt = Number.NEGATIVE_INFINITY;
  /** When turns were given within the last window, oldest first. */
  private readonly givenAt: number[] = [];

  /**
   * @param ceiling the configured rate, requests a minute; 0 is unpaced and never adapts.
   * @param windowMs the window the service counts its limit over.
   */
  constructor(
    private ceiling: number,
    private windowMs = WINDOW_MS,
  ) {
    this.rate = ceiling;
    this.top = ceiling;
  }

  /** The rate to pace at now, in requests a minute. */
  get perMinute(): number {
    return this.rate;
  }

  /** How often a refusal has lowered the rate. */
  get decreased(): number {
    return this.decreases;
  }

  /** A new configured rate (and the service's window): the ceiling moves, and the rate starts again from it. */
  setCeiling(ceiling: number, windowMs = this.windowMs): void {
    this.windowMs = windowMs;
    if (ceiling === this.ceiling) return;
    this.ceiling = ceiling;
    this.rate = ceiling;
    this.top = ceiling;
  }

  /**
   * Paces at `perMinute` from now on (kept between the floor and the
   * ceiling) and climbs back no higher after a refusal: for a process that
   * lost its budget store, its share of the budget, which it cannot tell
   * has grown while it paces alone.
   */
  keepTo(perMinute: number, now = performance.now()): void {
    this.restartAt(perMinute, now);
    this.top = this.rate;
  }

  /** Paces at `perMinute` from now on (kept between the floor and the ceiling), climbing back to the ceiling. */
  restartAt(perMinute: number, now = performance.now()): void {
    if (this.ceiling <= 0) return;
    this.rate = Math.min(this.ceiling, Math.max(this.ceiling * FLOOR, perMinute));
    this.top = this.ceiling;
    this.lastIncreaseAt = now;
  }

  /** Until when (performance.now()) no turn is given: a moment after the last refusal. */
  get heldUntil(): number {
    return this.heldUntilAt;
  }

  /**
   * The service refused a request for its rate: every turn is held a moment,
   * and the rate lowered, once per burst of refusals. Returns whether the
   * rate changed.
   */
  refused(now = performance.now()): boolean {
    if (this.ceiling <= 0) return false;
    // Refusals that follow each other are one episode: the window the runs overfilled, still full.
    const sameEpisode = now - this.lastRefusalAt < 2 * this.hold;
    this.hold = sameEpisode ? Math.min(this.inWindow(LONGEST_HOLD_MS), 2 * this.hold) : this.inWindow(FIRST_HOLD_MS);
    this.lastRefusalAt = now;
    this.heldUntilAt = Math.max(this.heldUntilAt, now + this.hold);
    const lowered = Math.max(this.ceiling * FLOOR, this.measuredShare(now));
    if (sameEpisode || now < this.quietUntil || lowered === this.rate) return false;
    this.rate = lowered;
    this.decreases += 1;
    this.lastIncreaseAt = now;
    const cooldown = (REFUSALS_PER_DECREASE_INTERVALS * MINUTE_MS) / this.rate;
    this.quietUntil = now + Math.max(this.inWindow(MIN_COOLDOWN_MS), cooldown);
    return true;
  }

  /**
   * The rate this run's requests in the service's window stand for, a
   * little under: its share of the limit, when the window was full. Falls
   * back to a fixed cut before the run has sent enough to measure.
   */
  private measuredShare(now: number): number {
    while ((this.givenAt[0] ?? now) <= now - this.windowMs) this.givenAt.shift();
    const own = this.givenAt.length;
    if (own < MEASURED_AT_LEAST) return this.rate * DECREASE;
    return Math.min(this.rate * DECREASE_AT_LEAST, ((own * MINUTE_MS) / this.windowMs) * SHARE_MARGIN);
  }

  /** A time of the published minute's window in the service's. */
  private inWindow(ms: number): number {
    return (ms * this.windowMs) / WINDOW_MS;
  }

  /** A turn was given: the rate climbs by the time since the last one, while there is demand. Returns whether it changed. */
  given(now = performance.now()): boolean {
    this.givenAt.push(now);
    if (this.givenAt.length > 2 * this.ceiling + MEASURED_AT_LEAST) this.givenAt.shift();
    if (this.rate >= this.top) {
      this.lastIncreaseAt = now;
      return false;
    }
    // An idle stretch is no evidence that the service has room: climb by at most one interval's worth.
    const elapsed = Math.min(now - (this.lastIncreaseAt ?? now), MINUTE_MS / this.rate);
    this.lastIncreaseAt = now;
    const climb = (this.ceiling * INCREASE_PER_MINUTE * elapsed) / this.inWindow(MINUTE_MS);
    this.rate = Math.min(this.top, this.rate + climb);
    return true;
  }
}
