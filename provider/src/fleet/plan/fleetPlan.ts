import type { Inventory } from "../../inventory/inventory";
import { clientFrom, type ProviderSettings } from "../../runtime/config";
import type { FleetCommand, ShardOperation } from "../fleetOptions";
import { type ShardResult, shardResult } from "../result";
import { excludeUnsupported } from "../shard/automation";
import type { ShardState } from "../shard/shard";
import type { ShardJob } from "../shard/shardJob";
import { assignShards, type Shard } from "./assignment";
import { auditedDriftJobs } from "./auditedDrift";
import { gateOffboarding, type LeavingTenant, type OffboardingDecision } from "./offboardingGate";
import { deletionRefusal, type Ownership } from "./ownership";
import { overviewOf, type ShardOverview, UNCHANGED_SINCE_UP } from "./shardOverview";

// What one run does to which shard, decided before any shard runs: the
// shards the inventory needs, each offboarding approved or refused, and per
// shard a job or the reason it is skipped.

export interface FleetPlan {
  shardSize: number;
  /** The shards the run looks at: every one, or those `only` names. */
  chosen: Shard[];
  overviews: Map<string, ShardOverview>;
  decisions: OffboardingDecision[];
}

/** What a run's plan is made from besides the shards' states: the inventory and how it is cut into shards. */
export interface PlanInputs {
  /** Stem of the shard stacks' names. */
  fleet: string;
  inventory: Inventory;
  /** Tenants per new shard. */
  shardSize: number;
  /** Only these shards run; the others are still read to place new tenants. */
  only?: readonly string[];
  /** The offboardings the command line approves besides the inventory's tombstones, and how many one run may do. */
  offboarding: { allowed: readonly string[]; maxOffboard: number };
}

/** The tenants of the shards, by `keysOf` each shard's, with what each shard's state holds of them. */
function tenantsOf(
  chosen: readonly Shard[],
  states: ReadonlyMap<number, ShardState>,
  keysOf: (shard: Shard, state: ShardState | undefined) => readonly string[],
): LeavingTenant[] {
  return chosen.flatMap((shard) => {
    const state = states.get(shard.number);
    return keysOf(shard, state).map((key) => ({ key, shard: shard.name, holding: state?.holdings[key] }));
  });
}

/**
 * The offboardings of the run's shards, each approved or refused, before
 * any shard runs: for preview and up, the tenants the inventory no longer
 * lists; for destroy, only those refused, whose objects another stack
 * records (./ownership.ts).
 */
function offboardings(
  { inventory, offboarding }: PlanInputs,
  command: FleetCommand,
  chosen: readonly Shard[],
  states: ReadonlyMap<number, ShardState>,
  ownership: Ownership | undefined,
): OffboardingDecision[] {
  const keeps = ownership
    ? (tenant: LeavingTenant) => deletionRefusal(ownership, tenant.shard, tenant.holding)
    : undefined;
  if (command === "destroy") {
    return tenantsOf(chosen, states, (_shard, state) => state?.tenants ?? []).flatMap((tenant) => {
      const refusal = keeps?.(tenant);
      return refusal ? [{ ...tenant, refusal }] : [];
    });
  }
  if (command !== "preview" && command !== "up") return [];
  const deployed = [...states.values()].reduce((sum, state) => sum + state.tenants.length, 0);
  return gateOffboarding(
    tenantsOf(chosen, states, (shard) => shard.leaving),
    deployed,
    {
      ...offboarding,
      tombstones: inventory.offboard,
      inventoryTenants: inventory.tenants.length,
      source: inventory.source,
      ...(keeps ? { deletionRefusal: keeps } : {}),
    },
  );
}

/**
 * The shards of the inventory's tenants, those the run looks at, and its
 * offboardings decided; with `ownership`, none deletes what another stack
 * records.
 */
export function planFleet(
  command: FleetCommand,
  inputs: PlanInputs,
  states: ReadonlyMap<number, ShardState>,
  ownership?: Ownership,
): FleetPlan {
  const { fleet, inventory, shardSize, only } = inputs;
  const deployed = new Map([...states].map(([number, state]) => [number, state.tenants]));
  const keys = inventory.tenants.map((tenant) => tenant.key);
  const shards = assignShards(fleet, deployed, keys, shardSize);
  const chosen = shards.filter((shard) => !only || only.includes(shard.name));
  const overviews = new Map(
    chosen.map((shard) => [shard.name, overviewOf(inventory, shard, states.get(shard.number))]),
  );
  return { shardSize, chosen, overviews, decisions: offboardings(inputs, command, chosen, states, ownership) };
}

/** The resources a shard's operation leaves alone: those of its tenants whose offboarding was refused. */
function excludedUrns(shard: Shard, refused: readonly OffboardingDecision[]): string[] {
  return refused
    .filter((decision) => decision.shard === shard.name)
    .flatMap((decision) => decision.holding?.urns ?? []);
}

/**
 * The operations that leave a shard alone while its `up` mark shows it up to
 * date: its last `up` succeeded with the tenants as the inventory declares
 * them now, so `up` has nothing to deploy and `preview` nothing to plan but
 * drift, which only a refresh reads (`--refresh`; a drift mark makes it due).
 */
const SKIP_UP_TO_DATE: ReadonlySet<FleetCommand> = new Set(["preview", "up"]);

/** Which shards a run takes on beyond those due: `--all`, `--refresh`, and the audit log's say for `drift`. */
export interface JobChoice {
  all: boolean;
  refresh: boolean;
  /** `drift --audit-log`: the settings its reads go with, and how far the service's clock may lag. */
  auditLog?: { settings: ProviderSettings; marginSeconds: number };
}

/** Whether every tenant the operation would touch in the shard is one whose offboarding was refused. */
function onlyRefused(command: FleetCommand, shard: Shard, state: ShardState | undefined, refused: number): boolean {
  if (refused === 0) return false;
  return command === "destroy" ? refused === (state?.tenants.length ?? 0) : shard.tenants.length === 0;
}

/** Why an operation leaves a shard alone, or undefined when it runs it. */
function skipReason(
  choice: JobChoice,
  command: FleetCommand,
  shard: Shard,
  overview: ShardOverview | undefined,
  excluded: { urns: readonly string[]; only: boolean },
) {
  if ((command === "refresh" || command === "drift" || command === "destroy") && !shard.exists) return "no stack yet";
  // A shard of refused tenants only would run nothing, and its emptied stack must not be removed.
  if (excluded.only) return "nothing to run but refused offboardings";
  const unsupported = excluded.urns.length > 0 ? excludeUnsupported() : undefined;
  if (unsupported) return `an offboarding was refused and ${unsupported}, so its other changes wait`;
  if (SKIP_UP_TO_DATE.has(command) && !choice.all && !choice.refresh && overview?.upToDate) return UNCHANGED_SINCE_UP;
  return undefined;
}

/** Per chosen shard, the job the operation runs on it, or its result as skipped. */
function shardJobs(
  operation: ShardOperation,
  choice: JobChoice,
  plan: FleetPlan,
  states: ReadonlyMap<number, ShardState>,
): { jobs: ShardJob[]; skipped: ShardResult[] } {
  const refused = plan.decisions.filter((decision) => decision.refusal !== undefined);
  const jobs: ShardJob[] = [];
  const skipped: ShardResult[] = [];
  for (const shard of plan.chosen) {
    const exclude = excludedUrns(shard, refused);
    const state = states.get(shard.number);
    const only = onlyRefused(
      operation,
      shard,
      state,
      refused.filter((decision) => decision.shard === shard.name).length,
    );
    const reason = skipReason(choice, operation, shard, plan.overviews.get(shard.name), { urns: exclude, only });
    const refresh = shard.exists && (choice.refresh || state?.driftMark !== undefined);
    if (reason === undefined) jobs.push({ operation, shard, state, exclude, refresh });
    else {
      const run = { shard: shard.name, operation, tenants: shard.tenants.length };
      skipped.push(shardResult(run, { status: "skipped", reason }));
    }
  }
  return { jobs, skipped };
}

/** The shard jobs of the run; with `drift --audit-log`, only those the audit log asks for. */
export async function jobsToRun(
  command: ShardOperation,
  choice: JobChoice,
  plan: FleetPlan,
  states: ReadonlyMap<number, ShardState>,
): Promise<{ jobs: ShardJob[]; skipped: ShardResult[] }> {
  const planned = shardJobs(command, choice, plan, states);
  const { auditLog } = choice;
  if (command !== "drift" || !auditLog) return planned;
  const audited = await auditedDriftJobs(clientFrom(auditLog.settings), planned.jobs, auditLog.marginSeconds);
  return { jobs: audited.jobs, skipped: [...planned.skipped, ...audited.skipped] };
}
