import { mkdirSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { LocalWorkspace, PulumiCommand } from "@pulumi/pulumi/automation";
import type { Plan } from "../api";
import { createClient } from "../client";
import { checkPlans } from "../inventory/declare";
import { interruptionSummary } from "../recovery/shard";
import { CONFIG_NAMESPACE, clientOptionsFrom, type ProviderSettings, readSettings } from "../runtime/config";
import { assignShards, DEFAULT_SHARD_SIZE, type Shard, shardNumber } from "./assignment";
import { RequestBudget } from "./budget";
import type { FleetCommand, FleetOptions } from "./fleetOptions";
import { runPool } from "./pool";
import { progressSink } from "./progress";
import { type ShardResult, shardResult } from "./result";
import { type ShardState, shardDigest, shardStateOf, workspaceOptions } from "./shard";
import { runShardJob, type ShardJob, type ShardJobContext } from "./shardJob";

export { FLEET_COMMANDS, type FleetCommand, type FleetOptions } from "./fleetOptions";

/** One shard as `shards` and `status` report it. */
export interface ShardOverview {
  name: string;
  exists: boolean;
  tenants: string[];
  leaving: string[];
  /** Its last `up` deployed exactly these tenants with this package version. */
  upToDate: boolean;
  interrupted?: string;
}

/** The runner's own work before any shard runs, in seconds. */
export interface FleetTiming {
  /** Finding the CLI (`pulumi version`), listing the fleet's shard stacks in the backend, exporting each one's state. */
  scanSeconds: number;
  /** Reading and checking the partner's catalogue (preview and up), 0 otherwise. */
  catalogueSeconds: number;
}

export interface FleetReport {
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

/** The CLI, found and checked as each workspace would: its version checked unless the environment given says not to. */
function pulumiCommand(options: FleetOptions): Promise<PulumiCommand> {
  return PulumiCommand.get({ skipVersionCheck: Boolean(options.env.PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK) });
}

function concurrencyOf(options: FleetOptions): number {
  return Math.max(1, options.concurrency ?? availableParallelism());
}

/** Every shard stack of the fleet in the backend, with what its state holds. */
async function scanFleet(
  options: FleetOptions,
  pulumi: PulumiCommand,
  concurrency: number,
): Promise<Map<number, ShardState>> {
  const workspace = await LocalWorkspace.create(workspaceOptions(options, `${options.fleet}.scan`, pulumi));
  const numbered = (await workspace.listStacks())
    .map((summary) => stackNameOf(summary.name))
    .map((name) => ({ name, number: shardNumber(options.fleet, name) }))
    .filter((entry): entry is { name: string; number: number } => entry.number !== undefined);
  const states = await runPool(numbered, concurrency, async ({ name }) =>
    shardStateOf(name, await workspace.exportStack(name)),
  );
  return new Map(numbered.map((entry, index) => [entry.number, states[index] as ShardState]));
}

/** What the fleet's shards hold: each organisation id and tenant key in their state, with its shard's name. */
export interface FleetHoldings {
  organizations: Map<string, string>;
  keys: Map<string, string>;
}

/** Reads every shard stack of the fleet from the backend, and runs nothing. */
export async function fleetHoldings(options: FleetOptions): Promise<FleetHoldings> {
  const states = await scanFleet(options, await pulumiCommand(options), concurrencyOf(options));
  const holdings: FleetHoldings = { organizations: new Map(), keys: new Map() };
  for (const state of states.values()) {
    for (const id of state.organizations) holdings.organizations.set(id, state.name);
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
      state.interruption === undefined,
    ...(state?.interruption ? { interrupted: interruptionSummary(state.interruption) } : {}),
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

/** Why an operation leaves a shard alone, or undefined when it runs it. */
function skipReason(options: FleetOptions, command: FleetCommand, shard: Shard, overview: ShardOverview | undefined) {
  if ((command === "refresh" || command === "destroy") && !shard.exists) return "no stack yet";
  if (command === "up" && !options.all && overview?.upToDate) return "unchanged since its last up";
  return undefined;
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; seconds: number }> {
  const start = performance.now();
  const value = await work();
  return { value, seconds: (performance.now() - start) / 1000 };
}

/**
 * Runs one command over the fleet: every shard stack of `options.fleet` in
 * the backend, plus the new shards the inventory's new tenants need. Shards
 * run side by side (`concurrency`), share one request budget, and a failed
 * shard does not stop the others: the report lists every shard's result.
 * This function only schedules; each shard's run is {@link runShardJob}.
 */
export async function runFleet(command: FleetCommand, options: FleetOptions): Promise<FleetReport> {
  const concurrency = concurrencyOf(options);
  const shardSize = options.shardSize ?? DEFAULT_SHARD_SIZE;
  const scan = await timed(async () => {
    const pulumi = await pulumiCommand(options);
    return { pulumi, states: await scanFleet(options, pulumi, concurrency) };
  });
  const { pulumi, states } = scan.value;
  const deployed = new Map([...states].map(([number, state]) => [number, state.tenants]));
  const keys = options.inventory.tenants.map((tenant) => tenant.key);
  const shards = assignShards(options.fleet, deployed, keys, shardSize);
  const chosen = shards.filter((shard) => !options.only || options.only.includes(shard.name));
  const overviews = new Map(chosen.map((shard) => [shard.name, overviewOf(options, shard, states.get(shard.number))]));
  const timing: FleetTiming = { scanSeconds: scan.seconds, catalogueSeconds: 0 };
  const report = (results: ShardResult[]): FleetReport => ({
    command,
    fleet: options.fleet,
    shardSize,
    shards: [...overviews.values()],
    results,
    ok: results.every((result) => result.status !== "failed"),
    timing,
  });
  if (command === "shards" || command === "status") return report([]);

  const catalogue = await timed(async () =>
    command === "preview" || command === "up" ? checkedCatalogue(options) : undefined,
  );
  timing.catalogueSeconds = catalogue.seconds;

  const jobs: ShardJob[] = [];
  const skipped: ShardResult[] = [];
  for (const shard of chosen) {
    const reason = skipReason(options, command, shard, overviews.get(shard.name));
    if (reason === undefined) jobs.push({ operation: command, shard, state: states.get(shard.number) });
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
  };
  const results = await runPool(jobs, concurrency, (job, slot) => runShardJob(context, job, slot));
  progress.close();
  return report([...skipped, ...results]);
}
