import { interruptionSummary } from "../checkpoint/interruption";
import type { Shard } from "./assignment";
import { type FleetFindings, fleetFindings, type UnmanagedOrganizations } from "./findings";
import type { FleetCommand, FleetOptions } from "./fleetOptions";
import type { FleetPlan } from "./fleetPlan";
import type { ShardResult } from "./result";
import { type ShardState, shardDigest } from "./shard";
import type { StepLog } from "./stepLog";
import type { LastUp } from "./upMark";

// A fleet run's report: the shards' overview, every shard's result, the
// runner's own timing and the findings per tenant.

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
  interrupted?: string;
  /** Its drift mark: drift found by `drift` or `refresh` that no `up` has healed yet. */
  drift?: string;
}

/** The runner's own work before any shard runs, in seconds. */
export interface FleetTiming {
  /** Finding the CLI (`pulumi version`), listing the fleet's shard stacks in the backend, exporting each one's state and reading its tags. */
  scanSeconds: number;
  /** Reading and checking the partner's catalogue (preview and up), 0 otherwise. */
  catalogueSeconds: number;
  /** Listing the account's organisations (drift), 0 otherwise. */
  accountSeconds: number;
}

/** The run's report; its findings per tenant are documented in docs/guides/gitops.md under `formatVersion`. */
export interface FleetReport extends FleetFindings {
  command: FleetCommand;
  fleet: string;
  shardSize: number;
  shards: ShardOverview[];
  /** One per shard the command ran (or skipped), for the operations. */
  results: ShardResult[];
  ok: boolean;
  timing: FleetTiming;
}

/** Why a plain `up` runs the shard, most pressing first; none when it is up to date. */
function dueReasons(options: FleetOptions, shard: Shard, state: ShardState | undefined): string[] {
  const { lastUp } = state ?? {};
  const reasons: string[] = [];
  if (!shard.exists || (state?.tenants.length === 0 && !lastUp)) reasons.push("never deployed");
  if (state?.interruption) reasons.push(`interrupted (${interruptionSummary(state.interruption)})`);
  if (lastUp?.outcome === "failed") reasons.push(`its last up failed at ${lastUp.at}`);
  if (shard.exists && state && state.tenants.length > 0 && !lastUp) {
    // Deployed by a version before the up mark, or its first up was cut short.
    reasons.push("no successful up recorded");
  }
  const changed = state?.digest !== undefined && state.digest !== shardDigest(options.inventory, shard.tenants);
  if (changed || (lastUp?.outcome === "done" && shard.leaving.length > 0)) reasons.push("the inventory changed");
  if (state?.driftMark) reasons.push(`drift ${state.driftMark}`);
  return reasons;
}

export function overviewOf(options: FleetOptions, shard: Shard, state: ShardState | undefined): ShardOverview {
  const reasons = dueReasons(options, shard, state);
  return {
    name: shard.name,
    exists: shard.exists,
    tenants: shard.tenants,
    leaving: shard.leaving,
    upToDate: reasons.length === 0,
    ...(reasons.length > 0 ? { due: reasons.join("; ") } : {}),
    ...(state?.lastUp ? { lastUp: state.lastUp } : {}),
    ...(state?.interruption ? { interrupted: interruptionSummary(state.interruption) } : {}),
    ...(state?.driftMark ? { drift: state.driftMark } : {}),
  };
}

/** What a run knows once it has planned: the report is made from it and the shards' results. */
export interface FleetRun {
  command: FleetCommand;
  options: FleetOptions;
  plan: FleetPlan;
  states: ReadonlyMap<number, ShardState>;
  steps: StepLog;
  timing: FleetTiming;
}

export function fleetReport(run: FleetRun, results: ShardResult[], unmanaged?: UnmanagedOrganizations): FleetReport {
  const { command, options, plan, states } = run;
  const { formatVersion, ...findings } = fleetFindings({
    steps: run.steps.steps,
    decisions: plan.decisions,
    tombstones: options.inventory.offboard,
    deployed: new Set([...states.values()].flatMap((state) => state.tenants)),
    allowed: options.allowOffboard ?? [],
    applied: command === "up",
    ...(unmanaged ? { unmanaged } : {}),
  });
  return {
    formatVersion,
    command,
    fleet: options.fleet,
    shardSize: plan.shardSize,
    shards: [...plan.overviews.values()],
    results,
    ok: results.every((result) => result.status !== "failed"),
    timing: run.timing,
    ...findings,
  };
}
