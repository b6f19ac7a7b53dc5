/**
 * Which shard stack holds which tenant. The record is the backend itself:
 * a tenant belongs to the shard whose state holds its Tenant component, so
 * every runner on that backend sees the same assignment, it cannot disagree
 * with what is deployed, and nothing has to be committed back. Tenants not
 * deployed yet are placed by a rule every runner computes alike from the
 * same backend and inventory: the lowest-numbered shard holding tenants with
 * room, else a new one after the highest holding tenants. A shard stack that
 * holds no tenant counts as not there: runners that start together on a new
 * fleet each make their own shard's stack first, and one that saw another's
 * empty stack would otherwise place every tenant one shard off. Placing never
 * moves a tenant that is placed already.
 */

/** Tenants per shard unless told otherwise; docs/guides/fleets.md says how it was chosen. */
export const DEFAULT_SHARD_SIZE = 50;

export interface Shard {
  /** Stack name: `<fleet>-<number, three digits or more>`. */
  name: string;
  number: number;
  /** Keys of the inventory's tenants it holds, in inventory order. */
  tenants: string[];
  /** Keys of tenants in its state that the inventory no longer lists: offboarded by its next `up`. */
  leaving: string[];
  /** Whether its stack exists in the backend. */
  exists: boolean;
}

export function shardName(fleet: string, number: number): string {
  return `${fleet}-${String(number).padStart(3, "0")}`;
}

/** The shard number of a stack name of the fleet, or undefined for any other stack. */
export function shardNumber(fleet: string, stackName: string): number | undefined {
  if (!stackName.startsWith(`${fleet}-`)) return undefined;
  const rest = stackName.slice(fleet.length + 1);
  return /^\d{3,}$/.test(rest) ? Number(rest) : undefined;
}

/**
 * @param deployed tenant keys in each existing shard's state, by shard number
 * @param keys the inventory's tenant keys, in file order
 */
export function assignShards(
  fleet: string,
  deployed: ReadonlyMap<number, readonly string[]>,
  keys: readonly string[],
  shardSize: number,
): Shard[] {
  if (!Number.isInteger(shardSize) || shardSize < 1)
    throw new Error(`shard size must be a whole number of at least 1, got ${shardSize}`);
  const wanted = new Set(keys);
  const home = new Map<string, number>();
  for (const [number, tenants] of deployed) for (const key of tenants) if (!home.has(key)) home.set(key, number);
  const shards = new Map<number, Shard>();
  const shardOf = (number: number): Shard => {
    let shard = shards.get(number);
    if (!shard) {
      shard = { name: shardName(fleet, number), number, tenants: [], leaving: [], exists: deployed.has(number) };
      shards.set(number, shard);
    }
    return shard;
  };
  for (const number of deployed.keys()) shardOf(number);
  for (const [key, number] of home) if (!wanted.has(key)) shardOf(number).leaving.push(key);
  const unplaced: string[] = [];
  for (const key of keys) {
    const number = home.get(key);
    if (number === undefined) unplaced.push(key);
    else shardOf(number).tenants.push(key);
  }
  const holdsTenants = (shard: Shard) => shard.tenants.length + shard.leaving.length > 0;
  for (const key of unplaced) {
    const holding = [...shards.values()].filter(holdsTenants).sort((a, b) => a.number - b.number);
    const roomy = holding.find((shard) => shard.tenants.length < shardSize);
    const shard = roomy ?? shardOf(Math.max(0, ...holding.map((held) => held.number)) + 1);
    shard.tenants.push(key);
  }
  const order = new Map(keys.map((key, index) => [key, index]));
  return [...shards.values()]
    .map((shard) => ({ ...shard, tenants: shard.tenants.sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0)) }))
    .sort((a, b) => a.number - b.number);
}
