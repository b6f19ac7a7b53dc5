import { mkdirSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { LocalWorkspace, PulumiCommand } from "@pulumi/pulumi/automation";
import type { Plan } from "../api";
import { interruptionSummary } from "../checkpoint/interruption";
import { createClient } from "../client";
import { checkPlans } from "../inventory/declare";
import { CONFIG_NAMESPACE, clientOptionsFrom, type ProviderSettings, readSettings } from "../runtime/config";
import { assignShards, DEFAULT_SHARD_SIZE, type Shard, shardNumber } from "./assignment";
import { excludeUnsupported } from "./automation";
import { RequestBudget } from "./budget";
import { driftFoundIn } from "./driftMark";
import { type FleetFindings, fleetFindings, type UnmanagedOrganizations } from "./findings";
import type { FleetCommand, FleetOptions } from "./fleetOptions";
import { DEFAULT_MAX_OFFBOARD, gateOffboarding, type LeavingTenant, type OffboardingDecision } from "./offboardingGate";
import { runPool } from "./pool";
import { progressSink } from "./progress";
import { type ShardResult, shardResult } from "./result";
import { type ShardState, shardDigest, shardStateOf, workspaceOptions } from "./shard";
import { runShardJob, type ShardJob, type ShardJobContext } from "./shardJob";
import { StepLog } from "./stepLog";
import { unmanagedOrganizations } from "./unmanaged";

export { FLEET_COMMANDS, type FleetCommand, type FleetOptions } from "./fleetOptions";

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

function stackNameOf(listed: string): string {
  return listed.slice(listed.lastIndexOf("/") + 1);
}

/** The commands that look at the shards' drift marks: to run a marked shard, or to show its mark. */
const MARK_READERS: readonly FleetCommand[] = ["preview", "up", "drift", "status", "shards"];

/** The CLI, found and checked as each workspace would: its version checked unless the environment given says not to. */
function pulumiCommand(options: FleetOptions): Promise<PulumiCommand> {
  return PulumiCommand.get({ skipVersionCheck: Boolean(options.env.PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK) });
}

function concurrencyOf(options: FleetOptions): number {
  return Math.max(1, options.concurrency ?? availableParallelism());
}

/** Every shard stack of the fleet in the backend, with what its state holds (and its drift mark, for `readMarks`). */
async function scanFleet(
  options: FleetOptions,
  pulumi: PulumiCommand,
  concurrency: number,
  readMarks: boolean,
): Promise<Map<number, ShardState>> {
  const workspace = await LocalWorkspace.create(workspaceOptions(options, `${options.fleet}.scan`, pulumi));
  const numbered = (await workspace.listStacks())
    .map((summary) => stackNameOf(summary.name))
    .map((name) => ({ name, number: shardNumber(options.fleet, name) }))
    .filter((entry): entry is { name: string; number: number } => entry.number !== undefined);
  const states = await runPool(numbered, concurrency, async ({ name }) => {
    const state = shardStateOf(name, await workspace.exportStack(name));
    const mark = readMarks ? driftFoundIn(await workspace.listTags(name)) : undefined;
    return mark === undefined ? state : { ...state, driftMark: mark };
  });
  return new Map(numbered.map((entry, index) => [entry.number, states[index] as ShardState]));
}

/** The ids of the organisations a shard's state holds, one per tenant. */
function organizationIdsOf(state: ShardState): string[] {
  return Object.values(state.holdings).flatMap((holding) => (holding.organizationId ? [holding.organizationId] : []));
}

/** What the fleet's shards hold: each organisation id and tenant key in their state, with its shard's name. */
export interface FleetHoldings {
  organizations: Map<string, string>;
  keys: Map<string, string>;
}

/** Reads every shard stack of the fleet from the backend, and runs nothing. */
export async function fleetHoldings(options: FleetOptions): Promise<FleetHoldings> {
  const states = await scanFleet(options, await pulumiCommand(options), concurrencyOf(options), false);
  const holdings: FleetHoldings = { organizations: new Map(), keys: new Map() };
  for (const state of states.values()) {
    for (const id of organizationIdsOf(state)) holdings.organizations.set(id, state.name);
    for (const key of state.tenants) holdings.keys.set(key, state.name);
  }
  return holdings;
}

function overviewOf(options: FleetOptions, shard: Shard, state: ShardState | undefined): ShardOverview {
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

/** The provider settings every shard gets: the `dmarc:*` config, else the environment. */
export function settingsOf(options: Pick<FleetOptions, "config">): ProviderSettings {
  return readSettings({ get: (key) => options.config[`${CONFIG_NAMESPACE}:${key}`]?.value }, process.env);
}

/** The fleet's rate for all shards together: `dmarc:requestsPerSecond`. */
function totalRate(options: FleetOptions): number | undefined {
  const settings = settingsOf(options);
  const rate = settings.requestsPerSecond === undefined ? undefined : Number(settings.requestsPerSecond);
  return rate !== undefined && Number.isFinite(rate) && rate > 0 ? rate : undefined;
}

/**
 * The partner's catalogue, read once for every shard, and checked: an
 * inventory naming plans it cannot price is refused before any shard runs.
 * Handed to the shards' programs, so they send no request outside their
 * share of the fleet's request budget.
 */
async function checkedCatalogue(options: FleetOptions): Promise<Plan[] | undefined> {
  if (options.inventory.tenants.length === 0) return undefined;
  const plans = await createClient(clientOptionsFrom(settingsOf(options))).listPlans();
  checkPlans(options.inventory, plans);
  return plans;
}

/** The offboardings of the run's shards, each approved or refused, before any shard runs (preview and up). */
function offboardings(
  options: FleetOptions,
  command: FleetCommand,
  chosen: readonly Shard[],
  states: ReadonlyMap<number, ShardState>,
): OffboardingDecision[] {
  if (command !== "preview" && command !== "up") return [];
  const leaving: LeavingTenant[] = chosen.flatMap((shard) =>
    shard.leaving.map((key) => ({ key, shard: shard.name, holding: states.get(shard.number)?.holdings[key] })),
  );
  const deployed = [...states.values()].reduce((sum, state) => sum + state.tenants.length, 0);
  return gateOffboarding(leaving, deployed, {
    tombstones: options.inventory.offboard,
    allowed: options.allowOffboard ?? [],
    maxOffboard: options.maxOffboard ?? DEFAULT_MAX_OFFBOARD,
    inventoryTenants: options.inventory.tenants.length,
    source: options.inventory.source,
  });
}

/** The resources a shard's operation leaves alone: those of its tenants whose offboarding was refused. */
function excludedUrns(shard: Shard, refused: readonly OffboardingDecision[]): string[] {
  return refused
    .filter((decision) => decision.shard === shard.name)
    .flatMap((decision) => decision.holding?.urns ?? []);
}

/** Why an operation leaves a shard alone, or undefined when it runs it. */
function skipReason(
  options: FleetOptions,
  command: FleetCommand,
  shard: Shard,
  overview: ShardOverview | undefined,
  excluded: readonly string[],
) {
  if ((command === "refresh" || command === "drift" || command === "destroy") && !shard.exists) return "no stack yet";
  // A shard of refused tenants only would run nothing, and its emptied stack must not be removed.
  if (excluded.length > 0 && shard.tenants.length === 0) return "nothing to run but refused offboardings";
  const unsupported = excluded.length > 0 ? excludeUnsupported() : undefined;
  if (unsupported) return `an offboarding was refused and ${unsupported}, so its other changes wait`;
  if (command === "up" && !options.all && !options.refresh && overview?.upToDate) return "unchanged since its last up";
  return undefined;
}

/** The account's organisations that no shard's state holds (drift). */
async function accountCensus(
  options: FleetOptions,
  states: ReadonlyMap<number, ShardState>,
): Promise<UnmanagedOrganizations> {
  const managed = new Set([...states.values()].flatMap(organizationIdsOf));
  return unmanagedOrganizations(createClient(clientOptionsFrom(settingsOf(options))), managed);
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; seconds: number }> {
  const start = performance.now();
  const value = await work();
  return { value, seconds: (performance.now() - start) / 1000 };
}

/**
 * Runs one command over the fleet: every shard stack of `options.fleet` in
 * the backend, plus the new shards the inventory's new tenants need. Before
 * any shard runs, every offboarding is approved or refused; a refused
 * tenant is left out of its shard's run, whose other changes go ahead.
 * Shards run side by side (`concurrency`), share one request budget, and a
 * failed shard does not stop the others: the report lists every shard's
 * result, and the findings per tenant. This function only schedules; each
 * shard's run is {@link runShardJob}.
 */
export async function runFleet(command: FleetCommand, options: FleetOptions): Promise<FleetReport> {
  const concurrency = concurrencyOf(options);
  const shardSize = options.shardSize ?? DEFAULT_SHARD_SIZE;
  const scan = await timed(async () => {
    const pulumi = await pulumiCommand(options);
    return { pulumi, states: await scanFleet(options, pulumi, concurrency, MARK_READERS.includes(command)) };
  });
  const { pulumi, states } = scan.value;
  const deployed = new Map([...states].map(([number, state]) => [number, state.tenants]));
  const keys = options.inventory.tenants.map((tenant) => tenant.key);
  const shards = assignShards(options.fleet, deployed, keys, shardSize);
  const chosen = shards.filter((shard) => !options.only || options.only.includes(shard.name));
  const overviews = new Map(chosen.map((shard) => [shard.name, overviewOf(options, shard, states.get(shard.number))]));
  const decisions = offboardings(options, command, chosen, states);
  const refused = decisions.filter((decision) => decision.refusal !== undefined);
  const timing: FleetTiming = { scanSeconds: scan.seconds, catalogueSeconds: 0, accountSeconds: 0 };
  const steps = new StepLog();
  const report = (results: ShardResult[], unmanaged?: UnmanagedOrganizations): FleetReport => {
    const { formatVersion, ...findings } = fleetFindings({
      steps: steps.steps,
      decisions,
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
      shardSize,
      shards: [...overviews.values()],
      results,
      ok: results.every((result) => result.status !== "failed"),
      timing,
      ...findings,
    };
  };
  if (command === "shards" || command === "status") return report([]);

  const catalogue = await timed(async () =>
    command === "preview" || command === "up" ? checkedCatalogue(options) : undefined,
  );
  timing.catalogueSeconds = catalogue.seconds;
  const census = await timed(async () => (command === "drift" ? accountCensus(options, states) : undefined));
  timing.accountSeconds = census.seconds;

  const jobs: ShardJob[] = [];
  const skipped: ShardResult[] = [];
  for (const shard of chosen) {
    const exclude = excludedUrns(shard, refused);
    const reason = skipReason(options, command, shard, overviews.get(shard.name), exclude);
    const state = states.get(shard.number);
    const refresh = shard.exists && (options.refresh === true || state?.driftMark !== undefined);
    if (reason === undefined) jobs.push({ operation: command, shard, state, exclude, refresh });
    else
      skipped.push(
        shardResult(
          { shard: shard.name, operation: command, tenants: shard.tenants.length },
          { status: "skipped", reason },
        ),
      );
  }
  const logDir = join(options.stateDir, "logs");
  mkdirSync(logDir, { recursive: true });
  const progress = progressSink(options.progress ?? process.stderr, jobs.length + skipped.length);
  for (const result of skipped) progress.finished(result);
  const context: ShardJobContext = {
    options,
    pulumi,
    budget: new RequestBudget(totalRate(options)),
    progress,
    logDir,
    plans: catalogue.value,
    steps,
  };
  const results = await runPool(jobs, concurrency, (job, slot) => runShardJob(context, job, slot));
  progress.close();
  return report([...skipped, ...results], census.value);
}
