import type { FleetReport } from "../fleetReport";
import type { ShardState } from "../shard";

// Which shards' last up failed, and why: from the last kept `up` report,
// whose result for a shard is the last word on it when that run ran it.

/** Failed shards by name, each with the first error line its run gave. */
export function shardFailures(
  states: ReadonlyMap<number, ShardState>,
  lastUp: FleetReport | undefined,
): Map<string, string> {
  const names = new Set([...states.values()].map((state) => state.name));
  const failed = (lastUp?.results ?? []).filter((result) => result.status === "failed" && names.has(result.shard));
  return new Map(failed.map((result) => [result.shard, result.error ?? "failed"]));
}
