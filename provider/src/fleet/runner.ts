import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Writable } from "node:stream";
import { formatRate, type Pacing } from "../client";
import type { Inventory } from "../inventory/inventory";
import type { ProviderSettings } from "../runtime/config";
import { fallbackShare } from "./budget";
import { accountCensus } from "./findings/unmanaged";
import { concurrencyOf, type FleetCommand, type FleetOptions, scanOf, settingsOf } from "./fleetOptions";
import { type FleetReport, type FleetTiming, fleetReport } from "./fleetReport";
import { keepLastReport } from "./lastRun";
import { budgetWords, type FleetPacer, fleetPace, paceLines, paceOf, withFleetPacer } from "./pacer";
import { DEFAULT_SHARD_SIZE } from "./plan/assignment";
import { DEFAULT_AUDIT_LOG_MARGIN_SECONDS } from "./plan/auditedDrift";
import { checkedCatalogue } from "./plan/catalogue";
import { type JobChoice, jobsToRun, type PlanInputs, planFleet } from "./plan/fleetPlan";
import { DEFAULT_MAX_OFFBOARD } from "./plan/offboardingGate";
import { checkDeclarations, type Ownership, type OwnershipConflict } from "./plan/ownership";
import { type FleetScan, otherStacks, pulumiCommand, scanFleet } from "./plan/scan";
import { runPool } from "./pool";
import { progressSink } from "./progress";
import type { ShardResult } from "./result";
import { runShardJob, type ShardJob, type ShardJobContext } from "./shard/shardJob";
import { StepLog } from "./shard/stepLog";

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; seconds: number }> {
  const start = performance.now();
  const value = await work();
  return { value, seconds: (performance.now() - start) / 1000 };
}

/** How the shards' jobs run: side by side, at the fleet's pace, with progress written to `progress`. */
interface JobRun {
  concurrency: number;
  pacer: FleetPacer | undefined;
  rate: Pacing | undefined;
  progress: Writable;
}

/**
 * Runs the jobs side by side, every shard's provider taking its turns from
 * the run's pacer (through its workspace's environment), with progress from
 * the skipped shards on.
 */
async function runJobs(
  shared: Omit<ShardJobContext, "fallbackRate" | "progress" | "logDir">,
  jobs: readonly ShardJob[],
  skipped: readonly ShardResult[],
  run: JobRun,
): Promise<ShardResult[]> {
  const { concurrency, pacer, rate } = run;
  const logDir = join(shared.backend.stateDir, "logs");
  mkdirSync(logDir, { recursive: true });
  const progress = progressSink(run.progress, jobs.length + skipped.length);
  for (const result of skipped) progress.finished(result);
  if (rate && pacer && jobs.length > 0) {
    progress.note(
      "requests",
      `${formatRate(rate.requestsPerMinute)} a minute for all shards together (${rate.source}), one pacer for the run, ${budgetWords(pacer)}`,
    );
  }
  const backend = pacer ? { ...shared.backend, env: { ...shared.backend.env, ...pacer.env } } : shared.backend;
  const fallbackRate = fallbackShare(rate?.requestsPerMinute, concurrency);
  const context: ShardJobContext = { ...shared, backend, fallbackRate, progress, logDir };
  const stopLines = pacer ? paceLines(pacer, progress) : () => {};
  const results = await runPool(jobs, concurrency, (job) => runShardJob(context, job)).finally(stopLines);
  progress.close();
  return results;
}

/** The plan's inputs, defaults resolved. */
function planInputsOf(options: FleetOptions): PlanInputs {
  return {
    fleet: options.fleet,
    inventory: options.inventory,
    shardSize: options.shardSize ?? DEFAULT_SHARD_SIZE,
    ...(options.only ? { only: options.only } : {}),
    offboarding: { allowed: options.allowOffboard ?? [], maxOffboard: options.maxOffboard ?? DEFAULT_MAX_OFFBOARD },
  };
}

/** Which shards the command line takes on beyond those due. */
function jobChoiceOf(options: FleetOptions, settings: ProviderSettings): JobChoice {
  const marginSeconds = options.auditLogMarginSeconds ?? DEFAULT_AUDIT_LOG_MARGIN_SECONDS;
  return {
    all: options.all === true,
    refresh: options.refresh === true,
    ...(options.auditLog ? { auditLog: { settings, marginSeconds } } : {}),
  };
}

/** What every shard job takes of the options: its tenants, the stacks' configuration, the recovery, the audit log's say. */
function jobOptionsOf(options: FleetOptions): Pick<ShardJobContext, "tenants" | "config" | "recover" | "auditLog"> {
  return {
    tenants: { inventory: options.inventory, ...(options.declare ? { declare: options.declare } : {}) },
    config: options.config,
    ...(options.recover ? { recover: options.recover } : {}),
    auditLog: options.auditLog === true,
  };
}

/** The commands that weigh what the backend's other stacks hold: those that could declare or delete a customer. */
const OWNERSHIP_CHECKED: ReadonlySet<FleetCommand> = new Set(["preview", "up", "destroy"]);

/**
 * The fleet's shards, and for preview, up and destroy what every other stack
 * of the backend holds; preview and up are refused here, before any write,
 * when a tenant of the inventory is declared in another place too.
 */
async function scanBackend(command: FleetCommand, inventory: Inventory, fleetScan: FleetScan, concurrency: number) {
  const pulumi = await pulumiCommand(fleetScan.backend.env);
  // Every command reads the marks: its report says which shards are up to date, from their up marks.
  const states = await scanFleet(fleetScan, pulumi, concurrency, true);
  if (!OWNERSHIP_CHECKED.has(command)) return { pulumi, states };
  const ownership: Ownership = { fleet: fleetScan.fleet, states, elsewhere: await otherStacks(fleetScan, pulumi) };
  const { unreadable } = ownership.elsewhere;
  if (unreadable.length > 0) {
    fleetScan.progress.write(
      `stacks of the backend could not be read: what they declare is not checked, and no offboarding deletes anything: ${unreadable.join("; ")}\n`,
    );
  }
  if (command !== "destroy") checkDeclarations(inventory, ownership);
  return { pulumi, states, ownership };
}

/**
 * Runs one command over the fleet: every shard stack of `options.fleet` in
 * the backend, plus the new shards the inventory's new tenants need. Before
 * any shard runs, a tenant declared in another place on the backend refuses
 * the run (preview and up, {@link OwnershipConflict}), and every offboarding
 * is approved or refused; a refused
 * tenant is left out of its shard's run, whose other changes go ahead.
 * Shards run side by side (`concurrency`), take every request's turn from
 * one pacer the runner holds for the run (./pacer.ts), and a
 * failed shard does not stop the others: the report lists every shard's
 * result, and the findings per tenant. This function only schedules; each
 * shard's run is {@link runShardJob}. It is the edge: the options are
 * resolved here into what each part takes.
 */
export async function runFleet(command: FleetCommand, options: FleetOptions): Promise<FleetReport> {
  const concurrency = concurrencyOf(options);
  const settings = settingsOf(options);
  const fleetScan = scanOf(options);
  const { backend, progress } = fleetScan;
  const scan = await timed(() => scanBackend(command, options.inventory, fleetScan, concurrency));
  const { pulumi, states, ownership } = scan.value;
  const plan = planFleet(command, planInputsOf(options), states, ownership);
  const timing: FleetTiming = { scanSeconds: scan.seconds, catalogueSeconds: 0, accountSeconds: 0 };
  const steps = new StepLog();
  const offboarding = { tombstones: options.inventory.offboard, allowed: options.allowOffboard ?? [] };
  const run = { command, fleet: options.fleet, offboarding, plan, states, steps, timing };
  if (command === "shards" || command === "status") return fleetReport(run, []);

  return withFleetPacer(settings, progress, true, async (pacer) => {
    const { jobs, skipped } = await jobsToRun(command, jobChoiceOf(options, settings), plan, states);
    // Only the shards' programs price tenants: a run that skips every shard reads no catalogue.
    const catalogue = await timed(async () =>
      (command === "preview" || command === "up") && jobs.length > 0
        ? checkedCatalogue(settings, options.inventory)
        : undefined,
    );
    timing.catalogueSeconds = catalogue.seconds;

    const shared = { ...jobOptionsOf(options), backend, pulumi, plans: catalogue.value, steps };
    const rate = fleetPace(settings);
    const results = await runJobs(shared, jobs, skipped, { concurrency, pacer, rate, progress });
    // After the shards, which need nothing of it: its reads follow theirs instead of leaving the pace
    // unused while the shards' engines start.
    const census = await timed(async () => (command === "drift" ? accountCensus(settings, states) : undefined));
    timing.accountSeconds = census.seconds;
    const report = fleetReport(run, [...skipped, ...results], census.value);
    const paced = pacer ? { ...report, ...paceOf(pacer, results) } : report;
    keepLastReport(backend.stateDir, paced);
    return paced;
  });
}
