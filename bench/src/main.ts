// `npm run bench`: deploys a generated fleet of tenants through the real
// engine against the emulator, times up, a no-change preview, refresh and
// destroy, makes the same API calls directly with the client for a baseline,
// and reports against the lower bounds set by latency and rate limit. Run
// through scripts/run.mjs, which builds and sets the engine environment.

import { mkdirSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg, totalmem } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { RequestWindow } from "dmarc-partner-emulator";
import type { Plan } from "pulumi-dmarc-partner/api";
import { closeClients, createClient, type DmarcClient } from "pulumi-dmarc-partner/client";
import { describeInterruption } from "pulumi-dmarc-partner/recovery";
import { against, sideArguments } from "./against";
import { runOperations } from "./baseline";
import { budgetBench, budgetBenchMarkdown } from "./budgetBench";
import { type BenchEmulator, type EmulatorStats, launchEmulator } from "./emulator";
import { enforceBench } from "./enforceBench";
import { type ComparedKind, comparedKind, figuresOf, workloadOf } from "./figures";
import {
  boundsOf,
  type FleetSpec,
  FleetState,
  fleetSpec,
  operations,
  PHASES,
  type Phase,
  resourceCount,
} from "./fleet";
import { fleetSweep } from "./fleetSweep";
import { importBench } from "./importBench";
import { type BaselineEntry, beside, machineDescription, readBaselines, saveBaseline } from "./lastRelease";
import { type BenchOptions, CLIENT_MAX_CONCURRENCY, parseOptions, USAGE, UsageError } from "./options";
import { pageBench, pageBenchMarkdown } from "./pageBench";
import { type PluginBenchReport, pluginBench, pluginBenchMarkdown } from "./pluginBench";
import { publishBench } from "./publishBench";
import {
  type BenchReport,
  benchMarkdown,
  type Machine,
  type PhaseResult,
  type PhaseSample,
  type RequestTiming,
  ratios,
  type Settings,
  type SweepReport,
  type SweepRow,
  sweepChart,
  sweepMarkdown,
} from "./report";
import { endedChildrenCpuSeconds, ProcessSampler } from "./sampler";
import { createFleetStack, PROJECT_NAME, runStackPhases, type StackSettings } from "./stack";
import type { StateFootprint } from "./state";

const projectRoot = resolve(__dirname, "..", "..");
/** The last release's figures, per workload. */
const BASELINE_FILE = join(projectRoot, "bench", "baseline.json");
const startedAt = Date.now();
const HEARTBEAT_MS = 15_000;

function say(message: string): void {
  const seconds = ((Date.now() - startedAt) / 1000).toFixed(1).padStart(6);
  process.stderr.write(`[bench ${seconds}s] ${message}\n`);
}

function diffCounts(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  const diff: Record<string, number> = {};
  for (const [key, count] of Object.entries(after)) {
    const added = count - (before[key] ?? 0);
    if (added > 0) diff[key] = added;
  }
  return diff;
}

interface Context {
  options: BenchOptions;
  emulator: BenchEmulator;
  sampler: ProcessSampler;
  stackSettings: StackSettings;
}

function requestTiming(
  window: RequestWindow,
  beganAt: number,
  endedAt: number,
  requests: number,
  rateLimit: number | undefined,
): RequestTiming | null {
  const { firstRequestAt, lastAnsweredAt } = window;
  if (firstRequestAt === null || lastAnsweredAt === null || requests === 0) return null;
  const requestSpanSeconds = (lastAnsweredAt - firstRequestAt) / 1000;
  return {
    beforeFirstRequestSeconds: Math.max(0, firstRequestAt - beganAt) / 1000,
    requestSpanSeconds,
    afterLastAnswerSeconds: Math.max(0, endedAt - lastAnsweredAt) / 1000,
    spanToRate: rateLimit ? requestSpanSeconds / (requests / rateLimit) : null,
  };
}

/** Times one action and gathers what the emulator and /proc saw while it ran. */
async function samplePhase(
  context: Context,
  label: string,
  action: () => Promise<Record<string, number> | null>,
): Promise<PhaseSample> {
  const { emulator, sampler, options } = context;
  say(`${label}...`);
  const before: EmulatorStats = await emulator.stats();
  const cpuBefore = process.cpuUsage();
  const childrenCpuBefore = endedChildrenCpuSeconds();
  sampler.start();
  const heartbeat = setInterval(() => {
    emulator.stats().then(
      (now) => say(`  ${label}: ${now.requests - before.requests} API requests so far`),
      // A missed progress line is harmless; the phase's own outcome is what counts.
      () => undefined,
    );
  }, HEARTBEAT_MS);
  await emulator.openWindow();
  const beganAt = Date.now();
  const begin = performance.now();
  let changes: Record<string, number> | null;
  try {
    changes = await action();
  } finally {
    clearInterval(heartbeat);
  }
  const wallSeconds = (performance.now() - begin) / 1000;
  const endedAt = Date.now();
  const processes = sampler.stop();
  // Every stack the bench runs declares tenants' resources: an engine that took a step on them ran their provider.
  if (Object.values(changes ?? {}).some((count) => count > 0))
    sampler.requireMeasured(processes, ["engine", "provider"], label);
  const cpu = process.cpuUsage(cpuBefore);
  const childrenCpu = endedChildrenCpuSeconds() - childrenCpuBefore;
  const after = await emulator.stats();
  const requests = after.requests - before.requests;
  const sample: PhaseSample = {
    wallSeconds,
    requests,
    requestsByRoute: diffCounts(after.byRoute, before.byRoute),
    requestTiming: requestTiming(after.window, beganAt, endedAt, requests, options.rateLimit),
    rateLimited: after.rateLimited - before.rateLimited,
    changes,
    programCpuSeconds: (cpu.user + cpu.system) / 1e6,
    processes,
    endedChildrenCpuSeconds: Math.round(childrenCpu * 100) / 100,
    loadAverage: loadavg()[0] ?? 0,
  };
  const perMinute = (requests / wallSeconds) * 60;
  const limit = options.rateLimit === undefined ? "" : ` (limit ${options.rateLimit * 60})`;
  say(
    `${label}: ${wallSeconds.toFixed(2)} s, ${requests} requests, ${perMinute.toFixed(0)} a minute${limit}, ${sample.rateLimited} answered 429`,
  );
  return sample;
}

/** One phase of the generated fleet, with its rates and the bounds its call graph sets. */
async function measure(
  context: Context,
  spec: FleetSpec,
  phase: Phase,
  runner: PhaseResult["runner"],
  action: () => Promise<Record<string, number> | null>,
): Promise<PhaseResult> {
  const { options } = context;
  const sample = await samplePhase(context, `${runner} ${phase} (${spec.tenants} tenants)`, action);
  const { requests, wallSeconds } = sample;
  return {
    ...sample,
    phase,
    runner,
    requestsPerTenant: requests / spec.tenants,
    wallToRate: options.rateLimit ? wallSeconds / (requests / options.rateLimit) : null,
    requestsPerSecond: requests / wallSeconds,
    resourcesPerSecond: resourceCount(spec) / wallSeconds,
    bounds: boundsOf(operations(phase, spec, new FleetState()), requests, {
      latencyMs: options.latencyMs,
      rateLimit: options.rateLimit,
      concurrency: Math.min(options.parallel, options.maxConcurrency ?? CLIENT_MAX_CONCURRENCY),
    }),
  };
}

function baselineClient(context: Context): DmarcClient {
  const { emulator, options } = context;
  return createClient({
    baseUrl: emulator.url,
    clientId: emulator.partner.clientId,
    clientSecret: emulator.partner.clientSecret,
    requestsPerSecond: options.pace ?? 0,
    maxConcurrency: options.maxConcurrency ?? CLIENT_MAX_CONCURRENCY,
  });
}

/** The baseline for the given phases, in order, each starting like the provider does: without a token. */
async function runBaseline(context: Context, spec: FleetSpec, phases: readonly Phase[]): Promise<PhaseResult[]> {
  const state = new FleetState();
  const results: PhaseResult[] = [];
  for (const phase of phases) {
    await closeClients();
    const client = baselineClient(context);
    const ops = operations(phase, spec, state);
    results.push(
      await measure(context, spec, phase, "baseline", () =>
        runOperations(ops, client, context.options.parallel).then(() => null),
      ),
    );
  }
  await closeClients();
  return results;
}

/** Runs the phases on a fresh stack through Pulumi, then removes the stack whatever happened. */
async function runPulumi(
  context: Context,
  spec: FleetSpec,
  phases: readonly Phase[],
): Promise<{ results: PhaseResult[]; state: StateFootprint | null; pulumiVersion: string }> {
  const stack = await createFleetStack(spec, context.stackSettings);
  const { results, state } = await runStackPhases(
    stack,
    PROJECT_NAME,
    resourceCount(spec),
    phases,
    context.stackSettings,
    (phase, action) => measure(context, spec, phase, "pulumi", action),
  );
  return { results, state, pulumiVersion: stack.workspace.pulumiVersion };
}

function machine(pulumi: string, loadAtStart: number): Machine {
  return {
    cpus: availableParallelism(),
    cpuModel: cpus()[0]?.model.trim() ?? "unknown",
    memoryMiB: Math.round(totalmem() / 1024 / 1024),
    node: process.versions.node,
    pulumi,
    loadAverage: { start: loadAtStart, end: loadavg()[0] ?? 0 },
  };
}

function settingsOf(options: BenchOptions, spec: FleetSpec): Settings {
  return {
    tenants: spec.tenants,
    domainsPerTenant: spec.domainsPerTenant,
    resources: resourceCount(spec),
    plan: spec.plan,
    latencyMs: options.latencyMs,
    rateLimit: options.rateLimit ?? null,
    rateLimitHints: options.rateLimitHints,
    parallel: options.parallel,
    parallelSource: options.parallelFlag === undefined ? "Pulumi's default (4 x CPU cores)" : "--parallel",
    requestsPerSecond: options.pace ?? null,
    maxConcurrency: options.maxConcurrency ?? CLIENT_MAX_CONCURRENCY,
    skipCheckpoints: options.skipCheckpoints,
  };
}

function write(outDir: string, name: string, content: string): string {
  const path = join(outDir, name);
  writeFileSync(path, content);
  return path;
}

function phase(results: readonly PhaseResult[], name: Phase): PhaseResult {
  const found = results.find((result) => result.phase === name);
  if (!found) throw new Error(`no ${name} result`);
  return found;
}

async function single(context: Context, plans: readonly Plan[], loadAtStart: number): Promise<void> {
  const { options } = context;
  const spec = fleetSpec(plans, options.tenants, options.domains);
  say(
    `fleet: ${spec.tenants} tenants × ${spec.domainsPerTenant} domains = ${resourceCount(spec)} resources, plan ${spec.plan}`,
  );
  const pulumi = await runPulumi(context, spec, PHASES);
  const baseline = await runBaseline(context, spec, PHASES);
  const report: BenchReport = {
    kind: "bench",
    startedAt: new Date(startedAt).toISOString(),
    settings: settingsOf(options, spec),
    machine: machine(pulumi.pulumiVersion, loadAtStart),
    phases: pulumi.results,
    baseline,
    ratios: ratios(phase(pulumi.results, "up"), phase(baseline, "up")),
    state: pulumi.state,
  };
  const markdown = benchMarkdown(report);
  write(options.outDir, "report.json", `${JSON.stringify(report, null, 2)}\n`);
  const path = write(options.outDir, "report.md", markdown);
  say(`wrote ${path} and report.json`);
  process.stdout.write(`\n${markdown}`);
}

async function sweep(context: Context, sizes: number[], plans: readonly Plan[], loadAtStart: number) {
  const { options } = context;
  const rows: SweepRow[] = [];
  let pulumiVersion = "";
  for (const tenants of sizes) {
    const spec = fleetSpec(plans, tenants, options.domains);
    const pulumi = await runPulumi(context, spec, ["up", "destroy"]);
    pulumiVersion = pulumi.pulumiVersion;
    const [baselineUp, baselineDestroy] = await runBaseline(context, spec, ["up", "destroy"]);
    if (!baselineUp || !baselineDestroy) throw new Error("the baseline returned no result");
    rows.push({
      tenants,
      resources: resourceCount(spec),
      up: phase(pulumi.results, "up"),
      destroy: phase(pulumi.results, "destroy"),
      baselineUp,
      baselineDestroy,
      state: pulumi.state,
    });
  }
  // The plan depends on the domains per tenant only, so every size shares these settings.
  const firstSpec = fleetSpec(plans, sizes[0] ?? 1, options.domains);
  const { tenants: _tenants, resources: _resources, ...settings } = settingsOf(options, firstSpec);
  const report: SweepReport = {
    kind: "sweep",
    startedAt: new Date(startedAt).toISOString(),
    settings,
    machine: machine(pulumiVersion, loadAtStart),
    rows,
  };
  const markdown = sweepMarkdown(report);
  write(options.outDir, "sweep.json", `${JSON.stringify(report, null, 2)}\n`);
  write(options.outDir, "sweep.svg", sweepChart(report));
  const path = write(options.outDir, "sweep.md", markdown);
  say(`wrote ${path}, sweep.json and sweep.svg`);
  process.stdout.write(`\n${markdown}`);
}

async function main(): Promise<void> {
  let options: BenchOptions | undefined;
  try {
    options = parseOptions(process.argv.slice(2), projectRoot);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`bench: ${error.message}\n\n${USAGE}\n`);
    process.exit(2);
  }
  if (!options) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  mkdirSync(options.outDir, { recursive: true });
  const kind = comparedKind(options);
  if (options.against !== undefined && kind) {
    await runAgainst({ ...options, against: options.against }, kind);
    return;
  }
  if (options.page) {
    await runPageBench(options);
    return;
  }
  const backendUrl = process.env.PULUMI_BACKEND_URL;
  if (!backendUrl) {
    throw new Error("no PULUMI_BACKEND_URL: run the bench with `npm run bench`, which provisions the engine");
  }
  mkdirSync(options.outDir, { recursive: true });
  const loadAtStart = loadavg()[0] ?? 0;
  say(
    `starting the emulator (latency ${options.latencyMs} ms, rate limit ${options.rateLimit === undefined ? "off" : `${options.rateLimit}/s, hints ${options.rateLimitHints}`}); ` +
      `provider pacing ${options.pace === undefined ? "off (the client's default on loopback)" : `${options.pace}/s`}`,
  );
  const emulator = await launchEmulator();
  const stop = () => {
    emulator.close().finally(() => process.exit(130));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  try {
    const context: Context = {
      options,
      emulator,
      sampler: new ProcessSampler(emulator.pid),
      stackSettings: {
        projectRoot,
        backendUrl,
        emulator,
        parallel: options.parallelFlag,
        pace: options.pace,
        maxConcurrency: options.maxConcurrency,
        skipCheckpoints: options.skipCheckpoints,
        verbose: options.verbose,
      },
    };
    const plans = await baselineClient(context).listPlans();
    // One tenant through the baseline, untimed, so that neither side pays for warming up the emulator's code.
    await warmUp(context, fleetSpec(plans, 1, options.domains));
    await emulator.shapeTraffic(options.latencyMs, options.rateLimit, options.rateLimitHints);
    if (options.budget) await runBudgetBench(context);
    else if (options.plugin) await runPluginBench(context, plans, loadAtStart);
    else if (options.import) await runImportBench(context, plans);
    else if (options.enforce) await runEnforceBench(context, plans);
    else if (options.publish) await runPublishBench(context, options.sweep ?? [options.tenants], plans);
    else if (options.fleet) await runFleetSweep(context, options.sweep ?? [options.tenants], plans);
    else if (options.sweep) await sweep(context, options.sweep, plans, loadAtStart);
    else await single(context, plans, loadAtStart);
  } finally {
    await emulator.close();
  }
  if (kind) await compareWithLastRelease(options, kind);
}

/** This run's figures beside the last release's; with --save-baseline, they become the last release's. */
async function compareWithLastRelease(options: BenchOptions, kind: ComparedKind): Promise<void> {
  const workload = workloadOf(options, kind);
  const figures = figuresOf(kind, options.outDir);
  process.stdout.write(`\n${beside(readBaselines(BASELINE_FILE), workload, figures)}`);
  if (!options.saveBaseline) return;
  const { commitOf } = await import("../../scripts/checkout.mjs");
  const { pinnedPulumiVersion, pluginVersion } = await import("../../scripts/project.mjs");
  saveRelease({
    workload,
    release: pluginVersion(),
    commit: commitOf("HEAD"),
    measuredAt: new Date().toISOString(),
    machine: machineDescription(pinnedPulumiVersion()),
    rounds: 1,
    figures,
  });
}

function saveRelease(entry: BaselineEntry): void {
  saveBaseline(BASELINE_FILE, entry);
  say(
    `wrote the figures of ${entry.commit.slice(0, 7)} to ${BASELINE_FILE} as the last release's for: ${entry.workload}`,
  );
}

/** --against: the same bench on another commit and on this checkout, alternating. */
async function runAgainst(options: BenchOptions & { against: string }, kind: ComparedKind): Promise<void> {
  const workload = workloadOf(options, kind);
  const baseline = readBaselines(BASELINE_FILE).find((entry) => entry.workload === workload);
  const args = sideArguments(process.argv.slice(2));
  const { markdown, reference } = await against(options, kind, workload, args, { projectRoot, say }, baseline);
  write(options.outDir, "against.md", markdown);
  say(`wrote ${join(options.outDir, "against.md")}`);
  process.stdout.write(`\n${markdown}`);
  if (options.saveBaseline) saveRelease(reference);
}

/** What the fleet runner's benchmarks share: the project, the emulator and the runner's settings. */
function fleetSetupOf({ options, emulator }: Context) {
  return {
    projectRoot,
    emulator,
    outDir: options.outDir,
    domains: options.domains,
    shardSize: options.shardSize,
    concurrency: options.concurrency,
    pace: options.pace,
    say,
  };
}

async function runFleetSweep(context: Context, sizes: number[], plans: readonly Plan[]): Promise<void> {
  const markdown = await fleetSweep(
    {
      ...fleetSetupOf(context),
      fleetOnly: context.options.fleetOnly,
      measure: (spec, phase, action) => measure(context, spec, phase, "pulumi", action),
      single: async (spec) => (await runPulumi(context, spec, ["up", "destroy"])).results,
      baseline: (spec) => runBaseline(context, spec, ["up", "destroy"]),
    },
    sizes,
    plans,
  );
  process.stdout.write(`\n${markdown}`);
}

/** The fleet setup of a bench that starts from organisations made through the client (import, enforce). */
function seededSetupOf(context: Context) {
  return {
    ...fleetSetupOf(context),
    seed: async (spec: FleetSpec) => {
      await runBaseline(context, spec, ["up"]);
    },
  };
}

async function runImportBench(context: Context, plans: readonly Plan[]): Promise<void> {
  process.stdout.write(`\n${await importBench(seededSetupOf(context), context.options.tenants, plans)}`);
}

async function runEnforceBench(context: Context, plans: readonly Plan[]): Promise<void> {
  process.stdout.write(`\n${await enforceBench(seededSetupOf(context), context.options.tenants, plans)}`);
}

async function runPublishBench(context: Context, sizes: number[], plans: readonly Plan[]): Promise<void> {
  const markdown = await publishBench(
    {
      ...fleetSetupOf(context),
      parallel: context.options.parallel,
      measure: (spec, phase, action) => measure(context, spec, phase, "pulumi", action),
    },
    sizes,
    plans,
  );
  process.stdout.write(`\n${markdown}`);
}

async function runBudgetBench({ options, emulator }: Context): Promise<void> {
  const rows = await budgetBench({ emulator, projectRoot, tenants: options.tenants, say });
  write(options.outDir, "budget.json", `${JSON.stringify(rows, null, 2)}\n`);
  const markdown = budgetBenchMarkdown(rows);
  say(`wrote ${write(options.outDir, "budget.md", markdown)}`);
  process.stdout.write(`\n${markdown}`);
}

/** The folder of this platform's plugin executable, built (or found built) by scripts/plugin/. */
async function executableFolder(): Promise<string> {
  // scripts/ is ECMAScript modules, run beside the bench as the SDK's generator is.
  const { buildPlugin } = await import("../../scripts/plugin/index.mjs");
  say("plugin bench: building the plugin's executable (scripts/plugin/)");
  return dirname((await buildPlugin()).executable);
}

async function runPluginBench(context: Context, plans: readonly Plan[], loadAtStart: number): Promise<void> {
  const { options, stackSettings } = context;
  const hooks = {
    projectRoot,
    pluginFolder: options.pluginExecutable ? await executableFolder() : join(projectRoot, "provider", "bin"),
    outDir: options.outDir,
    stackSettings,
    say,
    sample: (label: string, action: () => Promise<Record<string, number> | null>) =>
      samplePhase(context, label, action),
  };
  const { spec, domains, resources, sides, pulumiVersion } = await pluginBench(hooks, plans, options.tenants);
  const report: PluginBenchReport = {
    kind: "plugin",
    startedAt: new Date(startedAt).toISOString(),
    settings: { ...settingsOf(options, spec), resources },
    machine: machine(pulumiVersion, loadAtStart),
    domains,
    sides,
  };
  write(options.outDir, "plugin.json", `${JSON.stringify(report, null, 2)}\n`);
  const markdown = pluginBenchMarkdown(report);
  say(`wrote ${write(options.outDir, "plugin.md", markdown)} and plugin.json`);
  process.stdout.write(`\n${markdown}`);
}

/** The page needs no emulator or engine: its data is generated, the browser is what is measured. */
async function runPageBench(options: BenchOptions): Promise<void> {
  const result = await pageBench({ outDir: options.outDir, say }, options.tenants, options.domains);
  write(options.outDir, "page.json", `${JSON.stringify(result, null, 2)}\n`);
  const markdown = pageBenchMarkdown(result);
  say(`wrote ${write(options.outDir, "page.md", markdown)}`);
  process.stdout.write(`\n${markdown}`);
}

async function warmUp(context: Context, spec: FleetSpec): Promise<void> {
  const client = baselineClient(context);
  const state = new FleetState();
  for (const phase of PHASES) await runOperations(operations(phase, spec, state), client, context.options.parallel);
  await closeClients();
}

main().catch((error: unknown) => {
  process.stderr.write(`bench: ${(error as Error)?.stack ?? String(error)}\n`);
  const interrupted = describeInterruption(error);
  if (interrupted) process.stderr.write(`bench: ${interrupted}\n`);
  process.exit(1);
});
