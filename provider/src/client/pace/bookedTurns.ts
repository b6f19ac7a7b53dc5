import type { AdaptiveRate } from "./adaptive";
import type { BudgetStore } from "./budgetStore";
import { SpacedTurns, type TurnSource, type TurnWaiter } from "./turns";

// Turns booked in a store the partner's other runs book in too
// (./budgetStore.ts). A process books one turn at a time, for whoever waits
// first when it comes: the runs that want turns then take them in turn, and
// a run that dies holds no more than the one it booked. Should the store
// fail, the process says so once and spaces its own turns from then on.

export class BookedTurns implements TurnSource {
  private readonly queue: TurnWaiter[] = [];
  private booking = false;
  private closed: Error | undefined;
  private fallback: SpacedTurns | undefined;

  /**
   * @param rate this process's rate now (its configured one, lowered after refusals)
   * @param lost told once, when the store fails and the process paces itself instead
   */
  constructor(
    readonly store: BudgetStore,
    private readonly rate: AdaptiveRate,
    private readonly lost: (error: unknown) => void,
  ) {}

  get perMinute(): number {
    return this.rate.perMinute;
  }

  get waiting(): number {
    return this.queue.length + (this.fallback?.waiting ?? 0);
  }

  /** Whether turns still come from the store (not from the process's own spacing since it failed). */
  get shared(): boolean {
    return this.fallback === undefined;
  }

  take(signal?: AbortSignal): Promise<void> {
    if (this.closed) return Promise.reject(this.closed);
    if (this.fallback) return this.fallback.take(signal);
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const waiter: TurnWaiter = { resolve, reject, signal, onAbort: () => this.drop(waiter, signal?.reason) };
      signal?.addEventListener("abort", waiter.onAbort, { once: true });
      this.queue.push(waiter);
      void this.bookWhileWaited();
    });
  }

  /** Refuses the turns waiting; the store stays open for the process's other users. */
  close(reason: Error): void {
    this.closed = reason;
    for (const waiter of [...this.queue]) this.drop(waiter, reason);
    this.fallback?.close(reason);
  }

  private drop(waiter: TurnWaiter, reason: unknown): void {
    const index = this.queue.indexOf(waiter);
    if (index < 0) return;
    this.queue.splice(index, 1);
    waiter.signal?.removeEventListener("abort", waiter.onAbort);
    waiter.reject(reason);
  }

  private async bookWhileWaited(): Promise<void> {
    if (this.booking) return;
    this.booking = true;
    try {
      while (this.queue.length > 0 && !this.closed) {
        // A refusal's hold: the turn is booked only once it is over, so the hold costs the others nothing.
        const held = this.rate.heldUntil - performance.now();
        if (held > 0) await new Promise((resolve) => setTimeout(resolve, held));
        const wait = await this.store.book(60_000 / this.rate.perMinute);
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        // A turn nobody waits for any more is lost: the next is booked only when wanted.
        const waiter = this.queue.shift();
        if (waiter === undefined) continue;
        waiter.signal?.removeEventListener("abort", waiter.onAbort);
        waiter.resolve();
      }
    } catch (error) {
      this.fallBack(error);
    } finally {
      this.booking = false;
    }
  }

  private fallBack(error: unknown): void {
    this.fallback = new SpacedTurns(this.rate.perMinute);
    this.lost(error);
    for (const waiter of this.queue.splice(0)) {
      waiter.signal?.removeEventListener("abort", waiter.onAbort);
      this.fallback.take(waiter.signal).then(waiter.resolve, waiter.reject);
    }
  }

  /** The process's own spacing follows its rate and holds too, once the store is lost. */
  rateChanged(): void {
    this.fallback?.setRate(this.rate.perMinute);
    this.fallback?.holdUntil(this.rate.heldUntil);
  }
}
