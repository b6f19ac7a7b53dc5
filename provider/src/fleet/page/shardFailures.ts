import type { FleetReport } from "../fleetReport";
import type { ShardState } from "../shard/shard";

// Which shards' last up failed, and why: the shard's `dmarc-fleet:up` tag
// says whether (every runner on every machine writes it), the last `up`
// report kept on this machine adds the error line when it ran that shard.

/** Failed shards by name, each with the first error line its run gave, else when it failed. */
export function shardFailures(
  states: ReadonlyMap<number, ShardState>,
  lastUp: FleetReport | undefined,
): Map<string, string> {
  const errors = new Map(
    (lastUp?.results ?? []).flatMap((result) =>
      result.status === "failed" ? [[result.shard, result.error ?? "failed"] as const] : [],
    ),
  );
  const failed = [...states.values()].filter((state) => state.lastUp?.outcome === "failed");
  return new Map(
    failed.map((state) => [state.name, errors.get(state.name) ?? `its last up failed at ${state.lastUp?.at}`]),
  );
}
