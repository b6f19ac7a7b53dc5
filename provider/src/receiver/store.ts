/**
 * What a store knows of a webhook-id:
 * - `claimed`: first sight; the caller processes it and then calls `complete` or `release`.
 * - `processing`: another delivery of it is being processed right now.
 * - `done`: processed already; a later delivery is a duplicate.
 */
export type ClaimResult = "claimed" | "processing" | "done";

/**
 * Remembers webhook-ids so each message is processed once. Implement it over a shared
 * database or cache when several receiver instances sit behind one URL; `claim` must then
 * be atomic (for example an insert that fails on a duplicate key).
 */
export interface DeliveryStore {
  /** Records the id as being processed unless the store already holds it. */
  claim(webhookId: string): ClaimResult | Promise<ClaimResult>;
  /** Marks a claimed id processed, so every later delivery of it is a duplicate. */
  complete(webhookId: string): void | Promise<void>;
  /** Forgets a claimed id after processing failed, so the sender's retry is processed. */
  release(webhookId: string): void | Promise<void>;
}

export interface MemoryDeliveryStoreOptions {
  /**
   * How long an id is remembered, in milliseconds. It must outlast the sender's retries
   * (the emulator's schedule spans about 28 hours) and the verifier's timestamp tolerance.
   * @defaultValue 172800000 (48 hours)
   */
  ttlMs?: number;
  /**
   * Most ids held at once; past it the oldest are forgotten first, which bounds memory
   * at a few MB whatever the delivery rate.
   * @defaultValue 10000
   */
  maxEntries?: number;
}

interface Entry {
  state: "processing" | "done";
  expiresAt: number;
}

/** A process-local DeliveryStore. It forgets everything on restart and is not shared between instances. */
export class MemoryDeliveryStore implements DeliveryStore {
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  // Insertion order is expiry order (every write re-inserts with the same TTL), so expired
  // and oldest entries are both at the front.
  readonly #entries = new Map<string, Entry>();

  constructor(options: MemoryDeliveryStoreOptions = {}) {
    this.#ttlMs = options.ttlMs ?? 48 * 60 * 60 * 1000;
    this.#maxEntries = options.maxEntries ?? 10_000;
    if (!(this.#ttlMs > 0)) throw new RangeError("receiver: `ttlMs` must be positive");
    if (!Number.isSafeInteger(this.#maxEntries) || this.#maxEntries <= 0) {
      throw new RangeError("receiver: `maxEntries` must be a positive integer");
    }
  }

  /** Ids currently remembered. */
  get size(): number {
    this.#evictExpired();
    return this.#entries.size;
  }

  claim(webhookId: string): ClaimResult {
    this.#evictExpired();
    const entry = this.#entries.get(webhookId);
    if (entry) return entry.state;
    this.#write(webhookId, "processing");
    return "claimed";
  }

  complete(webhookId: string): void {
    this.#write(webhookId, "done");
  }

  release(webhookId: string): void {
    this.#entries.delete(webhookId);
  }

  #write(webhookId: string, state: Entry["state"]): void {
    this.#entries.delete(webhookId);
    this.#entries.set(webhookId, { state, expiresAt: Date.now() + this.#ttlMs });
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size <= this.#maxEntries) break;
      this.#entries.delete(oldest);
    }
  }

  #evictExpired(): void {
    const now = Date.now();
    for (const [webhookId, entry] of this.#entries) {
      if (entry.expiresAt > now) break;
      this.#entries.delete(webhookId);
    }
  }
}
