import { interruptionSummary } from "../../checkpoint/interruption";
import type { Inventory } from "../../inventory/inventory";
import { type ShardState, shardDigest } from "../shard/shard";
import type { LastUp } from "../shard/upMark";
import type { Shard } from "./assignment";

// What `shards` and `status` say of one shard, read off its state before
// anything runs: the plan and the report both carry it.

/** One shard as `shards` and `status` report it. */
export interface ShardOverview {
  name: string;
  exists: boolean;
  tenants: string[];
  leaving: string[];
  /**
   * Its last `up` succeeded and deployed exactly these tenants as the
   * inventory declares them, with this package version; it was not
   * interrupted since, and no drift was found since. A plain `up` skips it.
   */
  upToDate: boolean;
  /**
   * Why a plain `up` runs it, when it is not up to date: its reasons, most
   * pressing first, joined by "; " ("never deployed", "interrupted (...)",
   * "its last up failed at <time>", "the inventory changed", "drift found by
   * <command> at <time>"...).
   */
  due?: string;
  /** What its last `up` came to, from its `up` mark; none for a shard no `up` of this version ran. */
  lastUp?: LastUp;
  /** The digest its last successful `up` deployed, from its `up` mark. */
  digest?: string;
  interrupted?: string;
  /** Its drift mark: drift found by `drift` or `refresh` that no `up` has healed yet. */
  drift?: string;
}

/** Why a plain `up` runs the shard, most pressing first; none when it is up to date. */
function dueReasons(inventory: Inventory, shard: Shard, state: ShardState | undefined): string[] {
  const { lastUp } = state ?? {};
  const reasons: string[] = [];
  if (!shard.exists || (state?.tenants.length === 0 && !lastUp)) reasons.push("never deployed");
  if (state?.interruption) reasons.push(`interrupted (${interruptionSummary(state.interruption)})`);
  if (lastUp?.outcome === "failed") reasons.push(`its last up failed at ${lastUp.at}`);
  if (shard.exists && state && state.tenants.length > 0 && !lastUp) {
    // Deployed by a version before the up mark, or its first up was cut short.
    reasons.push("no successful up recorded");
  }
  const changed = state?.digest !== undefined && state.digest !== shardDigest(inventory, shard.tenants);
  if (changed || (lastUp?.outcome === "done" && shard.leaving.length > 0)) reasons.push("the inventory changed");
  if (state?.driftMark) reasons.push(`drift ${state.driftMark}`);
  return reasons;
}

export function overviewOf(inventory: Inventory, shard: Shard, state: ShardState | undefined): ShardOverview {
  const reasons = dueReasons(inventory, shard, state);
  return {
    name: shard.name,
    exists: shard.exists,
    tenants: shard.tenants,
    leaving: shard.leaving,
    upToDate: reasons.length === 0,
    ...(reasons.length > 0 ? { due: reasons.join("; ") } : {}),
    ...(state?.lastUp ? { lastUp: state.lastUp } : {}),
    ...(state?.digest ? { digest: state.digest } : {}),
    ...(state?.interruption ? { interrupted: interruptionSummary(state.interruption) } : {}),
    ...(state?.driftMark ? { drift: state.driftMark } : {}),
  };
}

/** Why `preview` and `up` skip an up-to-date shard. */
export const UNCHANGED_SINCE_UP = "unchanged since its last up";

/** The evidence that nothing of an up-to-date shard changed: its `up` mark's time and digest. */
export function unchangedEvidence(overview: ShardOverview): string {
  return `${UNCHANGED_SINCE_UP} at ${overview.lastUp?.at} (digest ${overview.digest})`;
}
