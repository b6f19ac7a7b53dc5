import { setTimeout as sleep } from "node:timers/promises";
import { CLIENT_DEFAULTS } from "./options";

// Keeps a large deployment under the service's rate limit instead of bouncing
// off 429 answers: requests are spaced evenly at the configured rate, and no
// more than a set number are in flight. One pacer serves the whole process,
// because the service counts the partner's requests, not one client's.

export interface PacingSettings {
  requestsPerSecond: number;
  maxConcurrency: number;
}

export class Pacer {
  private settings: PacingSettings;
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  private nextStartAt = 0;

  constructor(settings: PacingSettings) {
    this.settings = { ...settings };
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
    for (;;) {
      const rate = this.settings.requestsPerSecond;
      if (rate <= 0) return;
      const now = performance.now();
      if (now >= this.nextStartAt) {
        this.nextStartAt = now + 1000 / rate;
        return;
      }
      await sleep(this.nextStartAt - now);
    }
  }
}

export const sharedPacer = new Pacer({
  requestsPerSecond: CLIENT_DEFAULTS.requestsPerSecond,
  maxConcurrency: CLIENT_DEFAULTS.maxConcurrency,
});
