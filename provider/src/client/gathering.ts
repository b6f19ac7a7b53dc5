import { setTimeout as sleep } from "node:timers/promises";
import { DmarcApiError } from "./errors";

// Creates sent together. At 60 requests a minute every request is a second of
// a partner's pipeline, and the engine asks for a tenant's domains at the same
// moment (they wait on the same organisation and group): calls with the same
// key that arrive within a short window go out as one batch call. A batch the
// service refuses is sent again one call per item, so each caller gets its own
// answer or refusal; a batch whose answer is lost fails every caller the same
// way, and each settles by looking its object up, as after a single call.

/** How a family of calls is sent alone and together. */
export interface GatheredCall<Item, Result> {
  /** One item, one call: a window that gathered one item, and each item of a refused batch. */
  single(item: Item): Promise<Result>;
  /** Several items in one call; the answer names each result, in any order. */
  batch(items: Item[]): Promise<Result[]>;
  keyOfItem(item: Item): string;
  keyOfResult(result: Result): string;
  /** What a caller whose item the batch's answer left out is told. */
  missing(item: Item): Error;
}

interface Waiting<Item, Result> {
  item: Item;
  resolve(result: Result): void;
  reject(error: unknown): void;
}

/** A 4xx other than 429: something in the batch was refused, and nothing of it was carried out. */
function isRefusalOfContent(error: unknown): boolean {
  return error instanceof DmarcApiError && error.status >= 400 && error.status < 500 && error.status !== 429;
}

export class Gatherer {
  private readonly open = new Map<string, Waiting<unknown, unknown>[]>();

  /** @param windowMs how long the first call of a key waits for others; 0 sends every call alone. */
  constructor(private readonly windowMs: number) {}

  submit<Item, Result>(key: string, item: Item, call: GatheredCall<Item, Result>): Promise<Result> {
    if (this.windowMs <= 0) return call.single(item);
    return new Promise<Result>((resolve, reject) => {
      const waiting = { item, resolve, reject } as Waiting<unknown, unknown>;
      const gathered = this.open.get(key);
      if (gathered) {
        gathered.push(waiting);
        return;
      }
      this.open.set(key, [waiting]);
      void sleep(this.windowMs).then(() => {
        const all = (this.open.get(key) ?? []) as Waiting<Item, Result>[];
        this.open.delete(key);
        void this.send(all, call);
      });
    });
  }

  private async send<Item, Result>(all: Waiting<Item, Result>[], call: GatheredCall<Item, Result>): Promise<void> {
    const [only] = all;
    if (all.length === 1 && only) {
      await call.single(only.item).then(only.resolve, only.reject);
      return;
    }
    let results: Result[];
    try {
      results = await call.batch(all.map((waiting) => waiting.item));
    } catch (error) {
      if (!isRefusalOfContent(error)) {
        for (const waiting of all) waiting.reject(error);
        return;
      }
      // Refused for what it holds: each item alone gets the answer that is its own.
      await Promise.all(all.map((waiting) => call.single(waiting.item).then(waiting.resolve, waiting.reject)));
      return;
    }
    const byKey = new Map(results.map((result) => [call.keyOfResult(result), result]));
    for (const waiting of all) {
      const result = byKey.get(call.keyOfItem(waiting.item));
      if (result === undefined) waiting.reject(call.missing(waiting.item));
      else waiting.resolve(result);
    }
  }
}
