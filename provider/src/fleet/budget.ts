/**
 * One request budget for the whole fleet. A shard's provider reads its rate
 * (`dmarc:requestsPerMinute`) once, when its run starts, so the budget is
 * handed out at starts: a starting shard takes an equal part of what the
 * running shards leave free, split among the shards about to start with it;
 * a shard's part returns to the pool when it ends, for the next one. The
 * parts of the shards in flight never add up to more than the total.
 */
export class RequestBudget {
  private free: number;

  /** @param total requests a minute for all shards together; undefined for no limit. */
  constructor(readonly total: number | undefined) {
    this.free = total ?? 0;
  }

  /**
   * The rate for a shard starting now, when `starting` shards (this one
   * included) start together; undefined when there is no limit.
   */
  take(starting: number): number | undefined {
    if (this.total === undefined) return undefined;
    const share = this.free / Math.max(1, starting);
    this.free -= share;
    return share;
  }

  release(share: number | undefined): void {
    if (share !== undefined && this.total !== undefined) this.free = Math.min(this.total, this.free + share);
  }
}
