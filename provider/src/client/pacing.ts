import { setTimeout as sleep } from "node:timers/promises";
import { noticeLine } from "./notice";
import { CLIENT_DEFAULTS } from "./options";

// Keeps a large deployment under the service's rate limit instead of bouncing
// off 429 answers: requests are spaced evenly at the configured rate, and no
// more than a set number are in flight. One pacer serves the whole process,
// because the service counts the partner's requests, not one client's.

export interface PacingSettings {
  /** 0 sends as fast as the cap on requests in flight allows. */
  requestsPerMinute: number;
  maxConcurrency: number;
  /** Where the rate comes from, in words. */
  source: string;
  /** Receives the line that says requests are waiting their turn. */
  notice: (line: string) => void;
}

/** Requests held this long by the pacing get a line saying so, and another at most this often. */
export const PACING_NOTICE_INTERVAL_MS = 30_000;

export class Pacer {
  private settings: PacingSettings;
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  private nextStartAt = 0;
  /** Callers holding a slot and waiting for their start time. */
  private spacing = 0;
  /** Since when callers have waited for their start time without a line saying so. */
  private unsaidSince = 0;
  private started = 0;

  constructor(settings: PacingSettings) {
    this.settings = { ...settings };
  }

  /** Requests this process has started: every attempt, redirect and token request, as the service counts them. */
  get requestsStarted(): number {
    return this.started;
  }

  configure(changes: Partial<PacingSettings>): void {
    this.settings = { ...this.settings, ...changes };
    this.wakeWaiters();
  }

  /** Waits for a free slot and the next start time; the caller must call the returned release once. */
  async acquire(): Promise<() => void> {
    if (this.active < this.settings.maxConcurrency && this.waiting.length === 0) this.active += 1;
    // A woken waiter finds its slot already counted by wakeWaiters, so first come is first served.
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.active -= 1;
      this.wakeWaiters();
    };
    await this.waitForStartTime();
    this.started += 1;
    return release;
  }

  private wakeWaiters(): void {
    while (this.waiting.length > 0 && this.active < this.settings.maxConcurrency) {
      this.active += 1;
      this.waiting.shift()?.();
    }
  }

  /**
   * Spaces the moments requests really start, not the moments they were
   * scheduled for: on a busy machine timers fire late, and callers that each
   * booked a start time would then all start at once, a burst the service
   * counts against its window. Whoever wakes first takes the next start; the
   * others wait for the one after.
   */
  private async waitForStartTime(): Promise<void> {
    if (this.spacing === 0) this.unsaidSince = performance.now();
    this.spacing += 1;
    try {
      for (;;) {
        const rate = this.settings.requestsPerMinute;
        if (rate <= 0) return;
        const now = performance.now();
        if (now >= this.nextStartAt) {
          this.nextStartAt = now + 60_000 / rate;
          return;
        }
        this.sayWhoWaits(now, rate);
        // In steps no longer than the notice interval, so a long wait is announced while it lasts.
        await sleep(Math.min(this.nextStartAt - now, PACING_NOTICE_INTERVAL_MS));
      }
    } finally {
      this.spacing -= 1;
    }
  }

  /** A run held back by its own pacing says so now and then, so a slow run is not taken for a stuck one. */
  private sayWhoWaits(now: number, rate: number): void {
    if (now - this.unsaidSince < PACING_NOTICE_INTERVAL_MS) return;
    this.unsaidSince = now;
    const queued = this.spacing + this.waiting.length;
    const seconds = Math.ceil((queued * 60) / rate);
    this.settings.notice(
      noticeLine(
        `pacing at ${formatRate(rate)} requests a minute (${this.settings.source}): ` +
          `${queued === 1 ? "1 request waiting its turn" : `${queued} requests waiting their turn`}, about ${seconds} s of sending ahead`,
      ),
    );
  }
}

/** A rate as people read it: whole numbers bare, others to two decimals. */
export function formatRate(perMinute: number): string {
  return Number.isInteger(perMinute) ? String(perMinute) : perMinute.toFixed(2);
}

export const sharedPacer = new Pacer({
  requestsPerMinute: 0,
  maxConcurrency: CLIENT_DEFAULTS.maxConcurrency,
  source: "no client created yet",
  notice: () => {},
});
