import { interruptionSummary } from "../checkpoint/interruption";
import type { Shard } from "./assignment";
import type { FleetOptions } from "./fleetOptions";
import { type ShardState, shardDigest } from "./shard";

// What `shards` and `status` say of one shard, read off its state before
// anything runs: the plan and the report both carry it.

/** One shard as `shards` and `status` report it. */
export interface ShardOverview {
  name: string;
  exists: boolean;
  tenants: string[];
  leaving: string[];
  /** Its last `up` deployed exactly these tenants with this package version, and no drift was found since. */
  upToDate: boolean;
  interrupted?: string;
  /** Its drift mark: drift found by `drift` or `refresh` that no `up` has healed yet. */
  drift?: string;
}

export function overviewOf(options: FleetOptions, shard: Shard, state: ShardState | undefined): ShardOverview {
  return {
    name: shard.name,
    exists: shard.exists,
    tenants: shard.tenants,
    leaving: shard.leaving,
    upToDate:
      state?.digest === shardDigest(options.inventory, shard.tenants) &&
      shard.leaving.length === 0 &&
      state.interruption === undefined &&
      state.driftMark === undefined,
    ...(state?.interruption ? { interrupted: interruptionSummary(state.interruption) } : {}),
    ...(state?.driftMark ? { drift: state.driftMark } : {}),
  };
}
