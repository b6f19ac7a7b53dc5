export interface StatsView {
  requests: number;
  byRoute: Record<string, number>;
  byStatus: Record<string, number>;
  rateLimited: number;
  /** Connections destroyed by a drop fault (no status to count them under). */
  dropped: number;
}

/** Counters of API requests; the control plane is not counted. */
export class Stats {
  private view: StatsView = Stats.empty();

  private static empty(): StatsView {
    return { requests: 0, byRoute: {}, byStatus: {}, rateLimited: 0, dropped: 0 };
  }

  request(route: string | undefined): void {
    this.view.requests += 1;
    if (route) this.view.byRoute[route] = (this.view.byRoute[route] ?? 0) + 1;
  }

  answered(status: number): void {
    const key = String(status);
    this.view.byStatus[key] = (this.view.byStatus[key] ?? 0) + 1;
  }

  rateLimited(): void {
    this.view.rateLimited += 1;
  }

  dropped(): void {
    this.view.dropped += 1;
  }

  reset(): void {
    this.view = Stats.empty();
  }

  snapshot(): StatsView {
    return structuredClone(this.view);
  }
}
