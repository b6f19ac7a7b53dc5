import { isNotFound } from "../errors";

// Reads answered from list calls. During `pulumi refresh` the engine asks for
// every resource at once; most of them are items of a few lists (an
// organisation's domains, groups and subscriptions, an owner's webhooks, the
// partner's organisations), so one list request per scope answers them all.
//
// What a read may see: a list fetched by this process, started after the last
// write this process made to that scope (a generation check, not a timer). A
// list is kept for the life of the client, which in the provider is the
// process of one engine operation: nothing outlives a run, and reads of one
// refresh see one consistent snapshot per scope. Failed lists are not kept.

/** The kinds of list that answer reads. */
export type ListFamily = "organizations" | "domainGroups" | "domains" | "webhooks" | "subscriptions";

/**
 * One list: a family and the organisation or owner it belongs to (empty for
 * the partner's organisations). Without an owner a scope stands for every
 * list of the family: a write whose owner is not known touches them all.
 */
export interface ListScope {
  family: ListFamily;
  owner?: string;
}

interface Snapshot {
  /** The write clock when the list was requested. */
  takenAt: number;
  items: Promise<Map<string, unknown>>;
}

/** How one list is fetched and its items named. */
export interface ListSource<T> {
  fetch: () => Promise<T[]>;
  keyOf: (item: T) => string;
}

const familyKey = (family: ListFamily) => family;
const scopeKey = (scope: ListScope) => `${scope.family} ${scope.owner ?? ""}`;

export class ReadBatcher {
  /** Ticks at every write's start and end; a list taken before a tick of its scope is not used again. */
  private clock = 0;
  private readonly lastWrite = new Map<string, number>();
  private readonly snapshots = new Map<string, Snapshot>();
  /** Owners of items addressed by id alone (webhooks, subscriptions), learnt from lists and answers. */
  private readonly owners = new Map<string, string>();

  /** Every item of the scope's list: shared with concurrent callers, and kept until this process writes to it. */
  async list<T>(scope: ListScope, source: ListSource<T>): Promise<T[]> {
    return [...(await this.snapshot(scope, source)).values()];
  }

  /**
   * The item named `key`, from the scope's list. An item missing from the
   * list, or a list that is not found, is looked up with `direct` (a GET of
   * the item): a read reports an object gone only when the service says so
   * for that object.
   */
  async find<T>(
    scope: ListScope,
    key: string,
    source: ListSource<T>,
    direct: () => Promise<T | undefined>,
  ): Promise<T | undefined> {
    let items: Map<string, T>;
    try {
      items = await this.snapshot(scope, source);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      return direct();
    }
    return items.get(key) ?? direct();
  }

  /** Lists taken so far are not used again: the next read of each scope fetches it anew. */
  forget(): void {
    this.snapshots.clear();
  }

  /** Runs a state-changing call; lists of its scopes taken before it ends are not used afterwards. */
  async write<T>(scopes: readonly ListScope[], call: () => Promise<T>): Promise<T> {
    this.tick(scopes);
    try {
      return await call();
    } finally {
      this.tick(scopes);
    }
  }

  /** Records the owner of an item addressed by id alone, so writes to it touch only its owner's list. */
  learnOwner(family: ListFamily, id: string, owner: string): void {
    this.owners.set(`${family} ${id}`, owner);
  }

  /** The scope a write to the item touches: its owner's list when known, otherwise every list of the family. */
  scopeOf(family: ListFamily, id: string): ListScope {
    const owner = this.owners.get(`${family} ${id}`);
    return owner === undefined ? { family } : { family, owner };
  }

  private tick(scopes: readonly ListScope[]): void {
    this.clock += 1;
    for (const scope of scopes) {
      this.lastWrite.set(scope.owner === undefined ? familyKey(scope.family) : scopeKey(scope), this.clock);
    }
  }

  private isCurrent(scope: ListScope, snapshot: Snapshot): boolean {
    const writtenAt = Math.max(
      this.lastWrite.get(scopeKey(scope)) ?? 0,
      this.lastWrite.get(familyKey(scope.family)) ?? 0,
    );
    return snapshot.takenAt >= writtenAt;
  }

  private snapshot<T>(scope: ListScope, source: ListSource<T>): Promise<Map<string, T>> {
    const key = scopeKey(scope);
    const kept = this.snapshots.get(key);
    if (kept && this.isCurrent(scope, kept)) return kept.items as Promise<Map<string, T>>;
    const items = source.fetch().then((list) => new Map(list.map((item) => [source.keyOf(item), item])));
    const snapshot: Snapshot = { takenAt: this.clock, items };
    this.snapshots.set(key, snapshot);
    items.catch(() => {
      if (this.snapshots.get(key) === snapshot) this.snapshots.delete(key);
    });
    return items;
  }
}
