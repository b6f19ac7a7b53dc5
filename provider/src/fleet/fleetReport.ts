import type { InventoryTombstone } from "../inventory/inventory";
import {
  type FleetFindings,
  fleetFindings,
  type UnchangedShard,
  type UnmanagedOrganizations,
} from "./findings/findings";
import type { FleetCommand } from "./fleetOptions";
import type { PaceUse } from "./pacer";
import type { FleetPlan } from "./plan/fleetPlan";
import { type ShardOverview, unchangedEvidence } from "./plan/shardOverview";
import type { ShardResult } from "./result";
import type { ShardState } from "./shard/shard";
import type { StepLog } from "./shard/stepLog";

// A fleet run's report: the shards' overview, every shard's result, the
// runner's own timing and the findings per tenant.

/** The runner's own work before any shard runs, in seconds. */
export interface FleetTiming {
  /**
   * Finding the CLI (`pulumi version`), listing the fleet's shard stacks in
   * the backend, reading each one's state and tags (from a file backend's
   * files, else one CLI process each); for preview, up and destroy, also
   * every other stack's state (files, PostgreSQL rows, else one CLI process
   * each), for whose each customer is.
   */
  scanSeconds: number;
  /** Reading and checking the partner's catalogue (preview and up, when a shard runs), 0 otherwise. */
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
  /**
   * The requests the fleet's pacer gave turns to (the runner's and every
   * shard's) over the tenants of the shards that ran: an onboarding's cost
   * per customer. Absent when unpaced or when no shard ran.
   */
  requestsPerTenant?: number;
}

/** What a run knows once it has planned: the report is made from it and the shards' results. */
export interface FleetRun {
  command: FleetCommand;
  fleet: string;
  /** The offboardings asked for: the inventory's tombstones and the keys the command line approves. */
  offboarding: { tombstones: readonly InventoryTombstone[]; allowed: readonly string[] };
  plan: FleetPlan;
  states: ReadonlyMap<number, ShardState>;
  steps: StepLog;
  timing: FleetTiming;
}

/** The shards skipped as up to date, each with its evidence and tenants. */
function unchangedShards(plan: FleetPlan, results: readonly ShardResult[]): UnchangedShard[] {
  return results.flatMap((result) => {
    const overview = plan.overviews.get(result.shard);
    if (result.status !== "skipped" || !overview?.upToDate) return [];
    return [{ shard: result.shard, evidence: unchangedEvidence(overview), tenants: overview.tenants }];
  });
}

export function fleetReport(run: FleetRun, results: ShardResult[], unmanaged?: UnmanagedOrganizations): FleetReport {
  const { command, offboarding, plan, states } = run;
  const { formatVersion, ...findings } = fleetFindings({
    steps: run.steps.steps,
    decisions: plan.decisions,
    tombstones: offboarding.tombstones,
    deployed: new Set([...states.values()].flatMap((state) => state.tenants)),
    allowed: offboarding.allowed,
    applied: command === "up",
    unchanged: unchangedShards(plan, results),
    ...(unmanaged ? { unmanaged } : {}),
  });
  return {
    formatVersion,
    command,
    fleet: run.fleet,
    shardSize: plan.shardSize,
    shards: [...plan.overviews.values()],
    results,
    ok: results.every((result) => result.status !== "failed"),
    timing: run.timing,
    ...findings,
  };
}
