import { interruptionSummary } from "../checkpoint/interruption";
import type { Shard } from "./assignment";
import { type FleetFindings, fleetFindings, type UnmanagedOrganizations } from "./findings";
import type { FleetCommand, FleetOptions } from "./fleetOptions";
import type { FleetPlan } from "./fleetPlan";
import type { PaceUse } from "./pacer";
import type { ShardResult } from "./result";
import { type ShardState, shardDigest } from "./shard";
import type { StepLog } from "./stepLog";

// A fleet run's report: the shards' overview, every shard's result, the
// runner's own timing and the findings per tenant.

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

/** The runner's own work before any shard runs, in seconds. */
export interface FleetTiming {
  /** Finding the CLI (`pulumi version`), listing the fleet's shard stacks in the backend, exporting each one's state. */
  scanSeconds: number;
  /** Reading and checking the partner's catalogue (preview and up), 0 otherwise. */
  catalogueSeconds: number;
  /** Listing the account's organisations (drift, once the shards have run), 0 otherwise. */
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
  /** The fleet's pace and the share of it the run used, from its first request to its last; absent when unpaced. */
  pace?: PaceUse;
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
