// The floor of every pacing: a process that shares no budget with the
// others of its partner (or shares one with a script that does not) still
// meets them at the service's limit, and only learns so from its 429s. As
// TCP does, it then slows down multiplicatively and climbs back slowly
// (AIMD), so runs that cannot see each other converge on sharing the limit
// instead of taking turns at refusals.

/** The rate after a refusal, as a share of the rate before it (TCP CUBIC's 0.7: deep enough for two runs to part, shallow enough to keep most of the limit). */
const DECREASE = 0.7;
/** How fast the rate climbs back while turns are taken, as a share of the ceiling a minute. */
const INCREASE_PER_MINUTE = 0.1;
/** The lowest rate, as a share of the ceiling: refusals that another client causes never stop this one. */
const FLOOR = 0.1;
/** One refusal lowers the rate once: the refusals of requests sent before it are the same news. */
const REFUSALS_PER_DECREASE_INTERVALS = 3;
const MIN_COOLDOWN_MS = 2_000;

export class AdaptiveRate {
  private rate: number;
  private lastIncreaseAt: number | undefined;
  private quietUntil = Number.NEGATIVE_INFINITY;
  private decreases = 0;

  /** @param ceiling the configured rate, requests a minute; 0 is unpaced and never adapts. */
  constructor(private ceiling: number) {
    this.rate = ceiling;
  }

  /** The rate to pace at now, in requests a minute. */
  get perMinute(): number {
    return this.rate;
  }

  /** How often a refusal has lowered the rate. */
  get decreased(): number {
    return this.decreases;
  }

  /** A new configured rate: the ceiling moves, and the rate starts again from it. */
  setCeiling(ceiling: number): void {
    if (ceiling === this.ceiling) return;
    this.ceiling = ceiling;
    this.rate = ceiling;
  }

  /** The service refused a request for its rate: lower the rate, once per burst of refusals. Returns whether it changed. */
  refused(now = performance.now()): boolean {
    const lowered = Math.max(this.ceiling * FLOOR, this.rate * DECREASE);
    if (this.ceiling <= 0 || now < this.quietUntil || lowered === this.rate) return false;
    this.rate = lowered;
    this.decreases += 1;
    this.lastIncreaseAt = now;
    this.quietUntil = now + Math.max(MIN_COOLDOWN_MS, (REFUSALS_PER_DECREASE_INTERVALS * 60_000) / this.rate);
    return true;
  }

  /** A turn was given: the rate climbs by the time since the last one, while there is demand. Returns whether it changed. */
  given(now = performance.now()): boolean {
    if (this.rate >= this.ceiling) {
      this.lastIncreaseAt = now;
      return false;
    }
    // An idle stretch is no evidence that the service has room: climb by at most one interval's worth.
    const elapsed = Math.min(now - (this.lastIncreaseAt ?? now), 60_000 / this.rate);
    this.lastIncreaseAt = now;
    this.rate = Math.min(this.ceiling, this.rate + (this.ceiling * INCREASE_PER_MINUTE * elapsed) / 60_000);
    return true;
  }
}
