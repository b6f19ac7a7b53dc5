export interface StatsView {
  requests: number;
  byRoute: Record<string, number>;
  byStatus: Record<string, number>;
  rateLimited: number;
  /** Connections destroyed by a drop fault (no status to count them under). */
  dropped: number;
  /** When requests arrived and were answered since the window was last opened (epoch ms), for timing a phase. */
  window: RequestWindow;
}

export interface RequestWindow {
  openedAt: number;
  /** Arrival of the first API request since `openedAt`; null when none came. */
  firstRequestAt: number | null;
  /** When the last answer was sent (or a connection dropped) since `openedAt`; null when none was. */
  lastAnsweredAt: number | null;
}

/** Counters of API requests; the control plane is not counted. */
export class Stats {
  private view: StatsView = Stats.empty();

  private static empty(): StatsView {
    return { requests: 0, byRoute: {}, byStatus: {}, rateLimited: 0, dropped: 0, window: Stats.newWindow() };
  }

  private static newWindow(): RequestWindow {
    return { openedAt: Date.now(), firstRequestAt: null, lastAnsweredAt: null };
  }

  request(route: string | undefined): void {
    this.view.requests += 1;
    this.view.window.firstRequestAt ??= Date.now();
    if (route) this.view.byRoute[route] = (this.view.byRoute[route] ?? 0) + 1;
  }

  answered(status: number): void {
    const key = String(status);
    this.view.byStatus[key] = (this.view.byStatus[key] ?? 0) + 1;
    this.view.window.lastAnsweredAt = Date.now();
  }

  rateLimited(): void {
    this.view.rateLimited += 1;
  }

  dropped(): void {
    this.view.dropped += 1;
    this.view.window.lastAnsweredAt = Date.now();
  }

  /** Starts a new request window; the counters go on. */
  openWindow(): RequestWindow {
    this.view.window = Stats.newWindow();
    return structuredClone(this.view.window);
  }

  reset(): void {
    this.view = Stats.empty();
  }

  snapshot(): StatsView {
    return structuredClone(this.view);
  }
}
