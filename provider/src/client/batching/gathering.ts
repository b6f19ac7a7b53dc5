import { setTimeout as sleep } from "node:timers/promises";
import { DmarcApiError } from "../errors";

// Creates sent together. At 60 requests a minute every request is a second of
// a partner's pipeline, and a tenant declares its domains together: they go
// out as one batch call. When the caller says how many items of a key it
// declares together (the Tenant does, for its domains), the rule is a count,
// not a clock: the first create waits until every one of them has been heard
// of, as a create or as a declaration that makes none (it exists, or is
// adopted), so how busy the engine or the machine is does not matter; a wait
// for siblings that never come is bounded. Without a count, calls with the
// same key that arrive within a short window are gathered. A batch the
// service refuses is sent again one call per item, so each caller gets its
// own answer or refusal; a batch whose answer is lost fails every caller the
// same way, and each settles by looking its object up, as after a single call.

/** Longest a create waits for siblings not yet heard of; each one heard of starts it again. */
const SIBLING_WAIT_MS = 30_000;

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

/** What is known of one key's items declared together: each name heard of, and the creates waiting. */
interface Declared {
  together: number;
  /** `create`: a create is coming or waiting; `none`: declared, but no create will come; `sent`: gone out. */
  heard: Map<string, "create" | "none" | "sent">;
  waiting: Waiting<unknown, unknown>[];
  call?: GatheredCall<unknown, unknown>;
  timer?: NodeJS.Timeout;
}

export class Gatherer {
  private readonly open = new Map<string, Waiting<unknown, unknown>[]>();
  private readonly declared = new Map<string, Declared>();

  /** @param windowMs how long the first call of a key without a count waits for others; 0 sends such calls alone. */
  constructor(private readonly windowMs: number) {}

  /**
   * Sends the item, with others of its key. `together`: how many items the
   * caller declares under the key (itself included), so the call waits for
   * those still to come instead of for a window.
   */
  submit<Item, Result>(key: string, item: Item, call: GatheredCall<Item, Result>, together?: number): Promise<Result> {
    if (together !== undefined) return this.submitDeclared(key, item, call, together);
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

  /** An item of the key was declared: `create` when its create is coming, otherwise none will come for it. */
  hear(key: string, name: string, creates: boolean): void {
    const declared = this.declaredOf(key);
    if (declared.heard.get(name) === "sent") return;
    if (!creates && declared.waiting.some((waiting) => declared.call?.keyOfItem(waiting.item) === name)) return;
    declared.heard.set(name, creates ? "create" : "none");
    this.sendWhenComplete(declared);
  }

  private declaredOf(key: string): Declared {
    let declared = this.declared.get(key);
    if (declared === undefined) {
      declared = { together: 1, heard: new Map(), waiting: [] };
      this.declared.set(key, declared);
    }
    return declared;
  }

  private submitDeclared<Item, Result>(
    key: string,
    item: Item,
    call: GatheredCall<Item, Result>,
    together: number,
  ): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      const declared = this.declaredOf(key);
      declared.together = Math.max(declared.together, together);
      declared.call = call as GatheredCall<unknown, unknown>;
      declared.waiting.push({ item, resolve, reject } as Waiting<unknown, unknown>);
      declared.heard.set(call.keyOfItem(item), "create");
      this.sendWhenComplete(declared);
    });
  }

  /** Sends the waiting creates once every item declared together is heard of and each coming create waits; else waits, bounded. */
  private sendWhenComplete(declared: Declared): void {
    if (declared.waiting.length === 0 || declared.call === undefined) return;
    const call = declared.call;
    const waitingNames = new Set(declared.waiting.map((waiting) => call.keyOfItem(waiting.item)));
    const coming = [...declared.heard].some(([name, state]) => state === "create" && !waitingNames.has(name));
    clearTimeout(declared.timer);
    if (declared.heard.size < declared.together || coming) {
      declared.timer = setTimeout(() => this.sendWaiting(declared), SIBLING_WAIT_MS);
      return;
    }
    this.sendWaiting(declared);
  }

  private sendWaiting(declared: Declared): void {
    clearTimeout(declared.timer);
    const { call, waiting } = declared;
    declared.waiting = [];
    if (call === undefined) return;
    for (const item of waiting) declared.heard.set(call.keyOfItem(item.item), "sent");
    void this.send(waiting, call);
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
