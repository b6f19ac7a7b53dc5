import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { type Inventory, parseInventory } from "pulumi-dmarc-partner";
import { DEFAULT_SHARD_SIZE, type FleetReport, type PaceUse, runFleet } from "pulumi-dmarc-partner/fleet";
import { stringify } from "yaml";
import type { BenchEmulator } from "./emulator";
import { type FleetSpec, fleetSpec, resourceCount, tenantsOf } from "./fleet";
import type { PhaseResult } from "./report";
import type { RoleUsage } from "./sampler";
import { projectFolder } from "./stack";
import { type StateFootprint, stacksFootprint } from "./state";
import { lineChart } from "./svg";

// `npm run bench -- --fleet --sweep`: the same generated tenants deployed by
// the fleet runner (shard stacks side by side), by one single stack (up to
// SINGLE_STACK_LIMIT tenants: beyond, it takes hours), and by the client
// directly, per fleet size; wall time per tenant of each, in one chart.

/** One stack of more tenants than this takes too long to be worth measuring (283 s at 200). */
const SINGLE_STACK_LIMIT = 200;
const PROJECT_NAME = "dmarc-bench-fleet";
const RSS_SAMPLE_MS = 250;

export interface FleetSweepHooks {
  projectRoot: string;
  emulator: BenchEmulator;
  outDir: string;
  domains: number;
  shardSize: number | undefined;
  concurrency: number | undefined;
  pace: number | undefined;
  /** `--fleet-only`: no single stack beside the fleet (it is not on the fleet's path, and takes minutes). */
  fleetOnly: boolean;
  say(message: string): void;
  /** Times one action as a phase of the bench (requests, processes, bounds); `drift` is timed as the refresh it is. */
  measure(
    spec: FleetSpec,
    phase: "up" | "preview" | "refresh" | "destroy",
    action: () => Promise<Record<string, number> | null>,
  ): Promise<PhaseResult>;
  /** `up` and `destroy` of one single stack. */
  single(spec: FleetSpec): Promise<PhaseResult[]>;
  /** `up` and `destroy` through the client alone. */
  baseline(spec: FleetSpec): Promise<PhaseResult[]>;
}

/**
 * `preview` is the no-change one over the deployed shards, as a pull
 * request's check would run it; `one-tenant preview` that check on a pull
 * request renaming one tenant; `drift` the nightly one, finding none.
 */
type FleetPhase = "up" | "preview" | "one-tenant preview" | "drift" | "destroy";

/**
 * Where one fleet operation's time went. Shard-seconds are summed over the
 * shards, which run side by side: with c at once they add up to about c ×
 * the wall time they cover. CPU seconds are summed over the processes of
 * each kind.
 */
export interface FleetTimeBreakdown {
  phase: FleetPhase;
  wallSeconds: number;
  /** Shards the operation ran (not those it skipped). */
  shardsRun: number;
  /** The runner alone before any shard: listing and exporting the shard stacks, reading the catalogue. */
  scanSeconds: number;
  catalogueSeconds: number;
  /** Recovery, stack select or create, config set. */
  prepareShardSeconds: number;
  /** The operation's start to the engine's first resource step. */
  startupShardSeconds: number;
  /** The first resource step to the engine's summary. */
  stepsShardSeconds: number;
  /** The engine's summary to the operation's return (outputs and history after `up`), plus removing emptied stacks. */
  finishShardSeconds: number;
  /** Every `pulumi` process (engines and short CLI calls) as sampled; null when the operation ran none. */
  engineCpuSeconds: number | null;
  /** The dynamic-provider processes, as sampled; null when the operation ran none. */
  providerCpuSeconds: number | null;
  /** The bench process: the runner and every shard's inline program. */
  runnerCpuSeconds: number;
  /**
   * Ended child processes' CPU that no sample saw: CLI calls that started and
   * ended between two samples, and each process's moments after its last.
   */
  unsampledCpuSeconds: number;
}

/** How much of the fleet's pace one operation used, from its first request to its last (the runner's own figure). */
interface PhasePace extends PaceUse {
  phase: FleetPhase;
}

export interface FleetSweepRow {
  tenants: number;
  resources: number;
  shards: number;
  fleetUp: PhaseResult;
  /** The preview after `up`, with nothing to change: every shard skipped as unchanged. */
  fleetPreview: PhaseResult;
  /** The preview of one tenant renamed: its shard previewed, every other skipped. */
  fleetOneTenantPreview: PhaseResult;
  /** Every shard read back without writing state, and the account's organisations listed, with no drift to find. */
  fleetDrift: PhaseResult;
  /** `drift --audit-log` right after: every shard skipped, as the audit log shows no change since the drift above. */
  fleetAuditedDrift: PhaseResult;
  fleetDestroy: PhaseResult;
  /** Where the fleet's `up`, `preview`, `drift` and `destroy` spent their time. */
  time: FleetTimeBreakdown[];
  singleUp: PhaseResult | null;
  baselineUp: PhaseResult;
  /** The shards' checkpoints after `up`, together; null when the backend is not a file backend. */
  state: StateFootprint | null;
  /** Largest resident set of the runner process (it also runs the shards' programs), MiB. */
  runnerPeakMiB: number;
  /** The share of the pace each operation used; empty when the fleet is unpaced. */
  pace: PhasePace[];
}

/**
 * The bench's tenants as an inventory: organisation, group, webhook,
 * subscription and domains each, as the single stack has; with `dns`, the
 * `defaults` section's `dns` (how every record is published), as a partner
 * would write it once.
 */
export function inventoryOf(spec: FleetSpec, dns?: Record<string, unknown>): Inventory {
  return parseInventory(stringify({ ...(dns ? { defaults: { dns } } : {}), tenants: entriesOf(spec) }), "bench");
}

/** The bench's inventory with its first tenant renamed: a pull request that touches one tenant. */
function oneTenantRenamed(spec: FleetSpec): Inventory {
  const [first, ...others] = entriesOf(spec);
  const tenants = first ? [{ ...first, name: `${first.name} Renamed` }, ...others] : others;
  return parseInventory(stringify({ tenants }), "bench");
}

function entriesOf(spec: FleetSpec) {
  return tenantsOf(spec).map((tenant) => ({
    name: tenant.orgName,
    key: tenant.key,
    group: tenant.groupName,
    plan: spec.plan,
    domains: tenant.domains.map((name) => ({ name })),
    webhooks: [{ name: tenant.webhookName, url: tenant.webhookUrl, events: ["domain.verified"] }],
  }));
}

export function changesOf(report: FleetReport): Record<string, number> {
  if (!report.ok) {
    const failed = report.results.filter((result) => result.status === "failed");
    throw new Error(
      `fleet ${report.command} failed in ${failed.map((result) => `${result.shard}: ${result.error}`).join("; ")}`,
    );
  }
  const total: Record<string, number> = {};
  for (const result of report.results) {
    for (const [kind, count] of Object.entries(result.changes)) total[kind] = (total[kind] ?? 0) + count;
  }
  return total;
}

const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);
const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

/** A kind's CPU, or none when the operation ran no process of it (a skipped shard): a 0 would read as free. */
const cpuOfKind = (usage: RoleUsage) => (usage.processes > 0 ? usage.cpuSeconds : null);

export function timeBreakdown(phase: FleetPhase, report: FleetReport, result: PhaseResult): FleetTimeBreakdown {
  const timings = report.results.flatMap((shard) => (shard.timing ? [shard.timing] : []));
  const part = (pick: (timing: (typeof timings)[number]) => number) => round(sum(timings.map(pick)));
  const { engine, provider } = result.processes;
  return {
    phase,
    wallSeconds: round(result.wallSeconds),
    shardsRun: timings.length,
    scanSeconds: round(report.timing.scanSeconds),
    catalogueSeconds: round(report.timing.catalogueSeconds),
    prepareShardSeconds: part((timing) => timing.recoverySeconds + timing.stackSeconds + timing.configSeconds),
    startupShardSeconds: part((timing) => timing.startupSeconds),
    stepsShardSeconds: part((timing) => timing.stepsSeconds),
    finishShardSeconds: part((timing) => timing.finishSeconds + timing.removeSeconds),
    engineCpuSeconds: cpuOfKind(engine),
    providerCpuSeconds: cpuOfKind(provider),
    runnerCpuSeconds: round(result.programCpuSeconds),
    unsampledCpuSeconds: round(Math.max(0, result.endedChildrenCpuSeconds - engine.cpuSeconds - provider.cpuSeconds)),
  };
}

/** Peak RSS of this process while `action` runs. */
async function withPeakRss<T>(action: () => Promise<T>): Promise<{ value: T; peakMiB: number }> {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, RSS_SAMPLE_MS);
  try {
    const value = await action();
    return { value, peakMiB: Math.round(Math.max(peak, process.memoryUsage().rss) / 1024 / 1024) };
  } finally {
    clearInterval(timer);
  }
}

/** What the bench's fleet runs share: the project, the emulator and the runner's settings. */
export type FleetSetup = Pick<FleetSweepHooks, "projectRoot" | "emulator" | "pace" | "shardSize" | "concurrency">;

/** Runner options for a new fleet of `size` tenants against the bench's emulator, `dmarc:*` config included. */
export function benchFleetOptions(setup: FleetSetup, size: number, inventory: Inventory) {
  const { emulator } = setup;
  const projectDir = projectFolder(setup.projectRoot, PROJECT_NAME);
  return {
    fleet: `bench-${size}-${Date.now().toString(36)}${randomBytes(2).toString("hex")}`,
    projectName: PROJECT_NAME,
    projectDir,
    stateDir: join(projectDir, ".dmarc-fleet"),
    config: {
      "dmarc:baseUrl": { value: emulator.url },
      "dmarc:clientId": { value: emulator.partner.clientId },
      "dmarc:clientSecret": { value: emulator.partner.clientSecret, secret: true },
      "dmarc:partnerId": { value: emulator.partner.id },
      ...(setup.pace === undefined ? {} : { "dmarc:requestsPerSecond": { value: String(setup.pace) } }),
    },
    env: {},
    inventory,
    shardSize: setup.shardSize ?? DEFAULT_SHARD_SIZE,
    concurrency: setup.concurrency ?? availableParallelism(),
  };
}

async function fleetRow(hooks: FleetSweepHooks, spec: FleetSpec): Promise<FleetSweepRow> {
  const options = benchFleetOptions(hooks, spec.tenants, inventoryOf(spec));
  let upReport: FleetReport | undefined;
  const up = await withPeakRss(() =>
    hooks.measure(spec, "up", async () => {
      upReport = await runFleet("up", options);
      return changesOf(upReport);
    }),
  );
  const state = upReport
    ? stacksFootprint(
        process.env.PULUMI_BACKEND_URL ?? "",
        PROJECT_NAME,
        upReport.results.map((result) => result.shard),
        resourceCount(spec),
      )
    : undefined;
  let previewReport: FleetReport | undefined;
  const fleetPreview = await hooks.measure(spec, "preview", async () => {
    previewReport = await runFleet("preview", options);
    const changes = changesOf(previewReport);
    const changed = Object.keys(changes).filter((kind) => kind !== "same");
    if (changed.length > 0)
      throw new Error(`the fleet's no-change preview planned changes: ${JSON.stringify(changes)}`);
    return changes;
  });
  let oneTenantReport: FleetReport | undefined;
  // Parsed before the clock starts, as every other phase's inventory is: the phases time the runner alone.
  const renamed = oneTenantRenamed(spec);
  const fleetOneTenantPreview = await hooks.measure(spec, "preview", async () => {
    oneTenantReport = await runFleet("preview", { ...options, inventory: renamed });
    const changes = changesOf(oneTenantReport);
    const ran = oneTenantReport.results.filter((result) => result.status !== "skipped");
    if (ran.length !== 1 || changes.update !== 1)
      throw new Error(`the one-tenant preview ran ${ran.length} shard(s) and planned ${JSON.stringify(changes)}`);
    return changes;
  });
  let driftReport: FleetReport | undefined;
  // The emulator shares this machine's clock: no lag to allow for.
  const audited = { ...options, auditLog: true, auditLogMarginSeconds: 0 };
  hooks.say("fleet drift: a refresh in preview mode of every shard, measured as the refresh phase");
  const fleetDrift = await hooks.measure(spec, "refresh", async () => {
    // Never checked before, every shard is refreshed, as by a plain drift; each records when it was.
    driftReport = await runFleet("drift", audited);
    const changes = changesOf(driftReport);
    const { differs, missing } = driftReport.totals.objects;
    if (differs + missing > 0) throw new Error(`the fleet's drift run found drift: ${JSON.stringify(changes)}`);
    return changes;
  });
  hooks.say("fleet drift --audit-log: one audit-log read per organisation, every shard skipped");
  const fleetAuditedDrift = await hooks.measure(spec, "refresh", async () => {
    const report = await runFleet("drift", audited);
    const ran = report.results.filter((result) => result.status !== "skipped");
    if (ran.length > 0) throw new Error(`the audited drift refreshed ${ran.map((result) => result.shard).join(", ")}`);
    return changesOf(report);
  });
  let destroyReport: FleetReport | undefined;
  const fleetDestroy = await hooks.measure(spec, "destroy", async () => {
    destroyReport = await runFleet("destroy", { ...options, inventory: inventoryOf({ ...spec, tenants: 0 }) });
    return changesOf(destroyReport);
  });
  if (!upReport || !previewReport || !oneTenantReport || !driftReport || !destroyReport)
    throw new Error("the fleet returned no report");
  const single = spec.tenants <= SINGLE_STACK_LIMIT && !hooks.fleetOnly;
  const singleUp = single ? ((await hooks.single(spec))[0] ?? null) : null;
  const [baselineUp] = await hooks.baseline(spec);
  if (!baselineUp) throw new Error("the baseline returned no result");
  return {
    tenants: spec.tenants,
    resources: resourceCount(spec),
    shards: upReport.shards.length,
    fleetUp: up.value,
    fleetPreview,
    fleetOneTenantPreview,
    fleetDrift,
    fleetAuditedDrift,
    fleetDestroy,
    time: [
      timeBreakdown("up", upReport, up.value),
      timeBreakdown("preview", previewReport, fleetPreview),
      timeBreakdown("one-tenant preview", oneTenantReport, fleetOneTenantPreview),
      timeBreakdown("drift", driftReport, fleetDrift),
      timeBreakdown("destroy", destroyReport, fleetDestroy),
    ],
    singleUp,
    baselineUp,
    state: state ?? null,
    runnerPeakMiB: up.peakMiB,
    pace: paceOf({
      up: upReport,
      preview: previewReport,
      "one-tenant preview": oneTenantReport,
      drift: driftReport,
      destroy: destroyReport,
    }),
  };
}

function paceOf(reports: Record<FleetPhase, FleetReport>): PhasePace[] {
  return Object.entries(reports).flatMap(([phase, report]) =>
    report.pace ? [{ phase: phase as FleetPhase, ...report.pace }] : [],
  );
}

/** The "share of the pace" table of a paced fleet: one line per size and operation; empty when unpaced. */
function paceMarkdown(rows: readonly FleetSweepRow[]): string {
  const lines = rows.flatMap((row) =>
    row.pace.map(
      (pace) =>
        `| ${[
          row.tenants,
          pace.phase,
          pace.perMinute,
          pace.requests,
          fixed(pace.seconds),
          pace.share === undefined ? "-" : `${(100 * pace.share).toFixed(1)}%`,
        ].join(" | ")} |`,
    ),
  );
  if (lines.length === 0) return "";
  return [
    "",
    "Share of the fleet's pace each operation used, from its first request to its last (the runner's pacer counts them):",
    "",
    "| tenants | operation | pace req/min | requests | first to last s | share of the pace |",
    "| ------- | --------- | ------------ | -------- | --------------- | ----------------- |",
    ...lines,
    "",
  ].join("\n");
}

const perTenant = (phase: PhaseResult | null, tenants: number) => (phase ? phase.wallSeconds / tenants : null);
const fixed = (value: number | null, digits = 2) => (value === null ? "-" : value.toFixed(digits));
/** How the onboarding created its domains: batch calls, then single creates. */
const domainCreates = (phase: PhaseResult) =>
  `${phase.requestsByRoute["POST /v1/domains/batch"] ?? 0} / ${phase.requestsByRoute["POST /v1/domains"] ?? 0}`;

function fleetSweepMarkdown(rows: readonly FleetSweepRow[], shardSize: number, concurrency: number): string {
  const lines = [
    `Fleet runner: shards of ${shardSize} tenants, ${concurrency} at once.`,
    "",
    "| tenants | resources | shards | fleet up s | fleet s/tenant | fleet up req/tenant | domain batches / single creates | no-change preview s | one-tenant preview s | drift s | drift req/tenant | audited drift s | audited drift req/tenant | single stack up s | single s/tenant | baseline up s | baseline s/tenant | fleet / baseline | fleet up req/s | fleet up 429s | fleet destroy s | state bytes/resource | runner peak MiB | engine peak MiB | provider peak MiB |",
    "| ------- | --------- | ------ | ---------- | -------------- | ------------------- | ------------------------------- | ------------------- | -------------------- | ------- | ---------------- | --------------- | ------------------------ | ----------------- | --------------- | ------------- | ----------------- | ---------------- | -------------- | ------------- | --------------- | -------------------- | --------------- | --------------- | ----------------- |",
  ];
  for (const row of rows) {
    lines.push(
      `| ${[
        row.tenants,
        row.resources,
        row.shards,
        fixed(row.fleetUp.wallSeconds),
        fixed(perTenant(row.fleetUp, row.tenants), 3),
        fixed(row.fleetUp.requestsPerTenant),
        domainCreates(row.fleetUp),
        fixed(row.fleetPreview.wallSeconds),
        fixed(row.fleetOneTenantPreview.wallSeconds),
        fixed(row.fleetDrift.wallSeconds),
        fixed(row.fleetDrift.requestsPerTenant),
        fixed(row.fleetAuditedDrift.wallSeconds),
        fixed(row.fleetAuditedDrift.requestsPerTenant),
        fixed(row.singleUp?.wallSeconds ?? null),
        fixed(perTenant(row.singleUp, row.tenants), 3),
        fixed(row.baselineUp.wallSeconds),
        fixed(perTenant(row.baselineUp, row.tenants), 3),
        `${(row.fleetUp.wallSeconds / row.baselineUp.wallSeconds).toFixed(1)}×`,
        fixed(row.fleetUp.requestsPerSecond, 1),
        row.fleetUp.rateLimited,
        fixed(row.fleetDestroy.wallSeconds),
        row.state ? fixed(row.state.bytesPerResource, 0) : "-",
        row.runnerPeakMiB,
        Math.round(row.fleetUp.processes.engine.peakMemoryMiB),
        Math.round(row.fleetUp.processes.provider.peakMemoryMiB),
      ].join(" | ")} |`,
    );
  }
  return `${lines.join("\n")}\n\n${timeMarkdown(rows)}${paceMarkdown(rows)}`;
}

/** The "where the time goes" table: one line per size and operation. */
export function timeMarkdown(rows: readonly FleetSweepRow[]): string {
  const lines = [
    "Where the time goes (shard-seconds summed over the shards; CPU seconds summed over the processes of each kind, - where the operation ran none; unsampled: ended processes' CPU that no sample of /proc saw):",
    "",
    "| tenants | operation | shards run | wall s | scan s | catalogue s | prepare shard-s | start-up shard-s | steps shard-s | finish shard-s | engine CPU s | provider CPU s | runner CPU s | unsampled CPU s |",
    "| ------- | --------- | ---------- | ------ | ------ | ----------- | --------------- | ---------------- | ------------- | -------------- | ------------ | -------------- | ------------ | --------------- |",
  ];
  for (const row of rows) {
    for (const time of row.time) {
      lines.push(
        `| ${[
          row.tenants,
          time.phase,
          time.shardsRun,
          fixed(time.wallSeconds),
          fixed(time.scanSeconds),
          fixed(time.catalogueSeconds),
          fixed(time.prepareShardSeconds),
          fixed(time.startupShardSeconds),
          fixed(time.stepsShardSeconds),
          fixed(time.finishShardSeconds),
          fixed(time.engineCpuSeconds),
          fixed(time.providerCpuSeconds),
          fixed(time.runnerCpuSeconds),
          fixed(time.unsampledCpuSeconds),
        ].join(" | ")} |`,
      );
    }
  }
  return `${lines.join("\n")}\n`;
}

function fleetSweepChart(rows: readonly FleetSweepRow[]): string {
  const series = (label: string, color: string, pick: (row: FleetSweepRow) => PhaseResult | null) => ({
    label,
    color,
    points: rows.flatMap((row) => {
      const y = perTenant(pick(row), row.tenants);
      return y === null ? [] : [{ x: row.tenants, y }];
    }),
  });
  return lineChart({
    title: "pulumi up: wall time per tenant against fleet size",
    xLabel: "tenants (N)",
    yLabel: "seconds per tenant",
    series: [
      series("fleet runner (shard stacks side by side)", "#1f77b4", (row) => row.fleetUp),
      series("one single stack", "#d62728", (row) => row.singleUp),
      series("baseline (client, no Pulumi)", "#2ca02c", (row) => row.baselineUp),
    ],
  });
}

/** Runs the sweep and writes fleet-sweep.{json,md,svg} to the output folder; returns the markdown. */
export async function fleetSweep(
  hooks: FleetSweepHooks,
  sizes: readonly number[],
  plans: Parameters<typeof fleetSpec>[0],
): Promise<string> {
  const rows: FleetSweepRow[] = [];
  for (const tenants of sizes) {
    const spec = fleetSpec(plans, tenants, hooks.domains);
    hooks.say(`fleet sweep: ${tenants} tenants (${resourceCount(spec)} resources)`);
    rows.push(await fleetRow(hooks, spec));
  }
  const shardSize = hooks.shardSize ?? DEFAULT_SHARD_SIZE;
  const concurrency = hooks.concurrency ?? availableParallelism();
  const markdown = fleetSweepMarkdown(rows, shardSize, concurrency);
  writeFileSync(
    join(hooks.outDir, "fleet-sweep.json"),
    `${JSON.stringify({ shardSize, concurrency, rows }, null, 2)}\n`,
  );
  writeFileSync(join(hooks.outDir, "fleet-sweep.svg"), fleetSweepChart(rows));
  writeFileSync(join(hooks.outDir, "fleet-sweep.md"), markdown);
  hooks.say(`wrote fleet-sweep.md, fleet-sweep.json and fleet-sweep.svg to ${hooks.outDir}`);
  return markdown;
}
