import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { formatRate } from "../client";
import { fallbackShare } from "./budget";
import { accountCensus } from "./findings/unmanaged";
import type { FleetCommand, FleetOptions } from "./fleetOptions";
import { type FleetReport, type FleetTiming, fleetReport } from "./fleetReport";
import { keepLastReport } from "./lastRun";
import { budgetWords, type FleetPacer, fleetPace, paceLines, paceOf, withFleetPacer } from "./pacer";
import { checkedCatalogue } from "./plan/catalogue";
import { jobsToRun, planFleet } from "./plan/fleetPlan";
import { concurrencyOf, pulumiCommand, scanFleet } from "./plan/scan";
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

/**
 * Runs the jobs side by side, every shard's provider taking its turns from
 * the run's pacer (through its workspace's environment), with progress from
 * the skipped shards on.
 */
async function runJobs(
  shared: Pick<ShardJobContext, "options" | "pulumi" | "plans" | "steps">,
  jobs: readonly ShardJob[],
  skipped: readonly ShardResult[],
  concurrency: number,
  pacer: FleetPacer | undefined,
): Promise<ShardResult[]> {
  const logDir = join(shared.options.stateDir, "logs");
  mkdirSync(logDir, { recursive: true });
  const progress = progressSink(shared.options.progress ?? process.stderr, jobs.length + skipped.length);
  for (const result of skipped) progress.finished(result);
  const rate = fleetPace(shared.options);
  if (rate && pacer && jobs.length > 0) {
    progress.note(
      "requests",
      `${formatRate(rate.requestsPerMinute)} a minute for all shards together (${rate.source}), one pacer for the run, ${budgetWords(pacer)}`,
    );
  }
  const options = pacer ? { ...shared.options, env: { ...shared.options.env, ...pacer.env } } : shared.options;
  const fallbackRate = fallbackShare(rate?.requestsPerMinute, concurrency);
  const context: ShardJobContext = { ...shared, options, fallbackRate, progress, logDir };
  const stopLines = pacer ? paceLines(pacer, progress) : () => {};
  const results = await runPool(jobs, concurrency, (job) => runShardJob(context, job)).finally(stopLines);
  progress.close();
  return results;
}

/**
 * Runs one command over the fleet: every shard stack of `options.fleet` in
 * the backend, plus the new shards the inventory's new tenants need. Before
 * any shard runs, every offboarding is approved or refused; a refused
 * tenant is left out of its shard's run, whose other changes go ahead.
 * Shards run side by side (`concurrency`), take every request's turn from
 * one pacer the runner holds for the run (./pacer.ts), and a
 * failed shard does not stop the others: the report lists every shard's
 * result, and the findings per tenant. This function only schedules; each
 * shard's run is {@link runShardJob}.
 */
export async function runFleet(command: FleetCommand, options: FleetOptions): Promise<FleetReport> {
  const concurrency = concurrencyOf(options);
  const scan = await timed(async () => {
    const pulumi = await pulumiCommand(options);
    // Every command reads the marks: its report says which shards are up to date, from their up marks.
    return { pulumi, states: await scanFleet(options, pulumi, concurrency, true) };
  });
  const { pulumi, states } = scan.value;
  const plan = planFleet(command, options, states);
  const timing: FleetTiming = { scanSeconds: scan.seconds, catalogueSeconds: 0, accountSeconds: 0 };
  const steps = new StepLog();
  const run = { command, options, plan, states, steps, timing };
  if (command === "shards" || command === "status") return fleetReport(run, []);

  return withFleetPacer(options, true, async (pacer) => {
    const { jobs, skipped } = await jobsToRun(command, options, plan, states);
    // Only the shards' programs price tenants: a run that skips every shard reads no catalogue.
    const catalogue = await timed(async () =>
      (command === "preview" || command === "up") && jobs.length > 0 ? checkedCatalogue(options) : undefined,
    );
    timing.catalogueSeconds = catalogue.seconds;

    const shared = { options, pulumi, plans: catalogue.value, steps };
    const results = await runJobs(shared, jobs, skipped, concurrency, pacer);
    // After the shards, which need nothing of it: its reads follow theirs instead of leaving the pace
    // unused while the shards' engines start.
    const census = await timed(async () => (command === "drift" ? accountCensus(options, states) : undefined));
    timing.accountSeconds = census.seconds;
    const report = fleetReport(run, [...skipped, ...results], census.value);
    const paced = pacer ? { ...report, ...paceOf(pacer, results) } : report;
    keepLastReport(options.stateDir, paced);
    return paced;
  });
}
