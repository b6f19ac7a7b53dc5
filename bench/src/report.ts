import type { Bounds, Phase } from "./fleet";
import type { RateLimitHints } from "./options";
import type { Role, RoleUsage } from "./sampler";
import type { StateFootprint } from "./state";
import { lineChart } from "./svg";

export interface Settings {
  tenants: number;
  domainsPerTenant: number;
  /** Resources the fleet declares (organisation, group, webhook, subscription and domains per tenant). */
  resources: number;
  plan: string;
  latencyMs: number;
  /** Requests per second the emulator admits; null when unlimited. */
  rateLimit: number | null;
  /** What its 429 says of when to come back (`none`: the published example). */
  rateLimitHints: RateLimitHints;
  /** Resource operations in flight (Pulumi's --parallel), and where the value came from. */
  parallel: number;
  parallelSource: "--parallel" | "Pulumi's default (4 x CPU cores)";
  /** The provider's and the baseline client's pacing; null when off. */
  requestsPerSecond: number | null;
  maxConcurrency: number;
  skipCheckpoints: boolean;
}

export interface Machine {
  cpus: number;
  cpuModel: string;
  memoryMiB: number;
  node: string;
  pulumi: string;
  /** 1-minute load average before and after: other work on the machine skews the times. */
  loadAverage: { start: number; end: number };
}

/** What the bench saw of one timed action, whatever ran it: the emulator's counts and the processes' costs. */
export interface PhaseSample {
  wallSeconds: number;
  /** API requests the emulator received (token and plan catalogue calls included, 429 answers included). */
  requests: number;
  requestsByRoute: Record<string, number>;
  /**
   * The phase's wall time in three parts, as the emulator saw its requests:
   * before the first arrived (processes starting, the program running), from
   * the first arrival to the last answer, and after it (the last checkpoint,
   * processes ending). Null when the phase sent no request.
   */
  requestTiming: RequestTiming | null;
  /** Requests answered 429 by the emulator's rate limit. */
  rateLimited: number;
  /** The engine's change summary (pulumi runs only). */
  changes: Record<string, number> | null;
  /** CPU of the bench process: the inline Pulumi program, or the baseline's client. */
  programCpuSeconds: number;
  /**
   * Sampled every 200 ms, so a process shorter than that (a quick CLI call)
   * may be missed and one that ends loses its last moments' CPU.
   */
  processes: Record<Role, RoleUsage>;
  /** CPU of every process the phase started and saw end (all of them, however short), counted whole. */
  endedChildrenCpuSeconds: number;
  /** 1-minute load average when the phase ended: other work on the machine skews its time. */
  loadAverage: number;
}

export interface PhaseResult extends PhaseSample {
  phase: Phase;
  /** `pulumi`: the engine with our provider; `baseline`: the same calls with the client, no Pulumi. */
  runner: "pulumi" | "baseline";
  requestsPerTenant: number;
  /** Wall time ÷ (requests ÷ rate): 1 is the rate limit's pace; null when not rate-limited. */
  wallToRate: number | null;
  requestsPerSecond: number;
  resourcesPerSecond: number;
  bounds: Bounds;
}

export interface BenchReport {
  kind: "bench";
  startedAt: string;
  settings: Settings;
  machine: Machine;
  phases: PhaseResult[];
  baseline: PhaseResult[];
  /** Null where the denominator is zero (no latency and no rate limit give a bound of zero). */
  ratios: { upToBaseline: number | null; upToBound: number | null; upToFloor: number | null };
  /** The checkpoint after `up`; null when the backend is not a file backend. */
  state: StateFootprint | null;
}

export interface SweepRow {
  tenants: number;
  resources: number;
  up: PhaseResult;
  destroy: PhaseResult;
  baselineUp: PhaseResult;
  baselineDestroy: PhaseResult;
  state: StateFootprint | null;
}

export interface SweepReport {
  kind: "sweep";
  startedAt: string;
  settings: Omit<Settings, "tenants" | "resources">;
  machine: Machine;
  rows: SweepRow[];
}

const MiB = 1024 * 1024;

export function fixed(value: number | null, digits = 1): string {
  return value === null ? "n/a" : value.toFixed(digits);
}

function times(value: number | null): string {
  return value === null ? "n/a" : `${value.toFixed(1)}×`;
}

export function ratio(numerator: number, denominator: number): number | null {
  return denominator > 0 ? numerator / denominator : null;
}

export function ratios(up: PhaseResult, baselineUp: PhaseResult): BenchReport["ratios"] {
  return {
    upToBaseline: ratio(up.wallSeconds, baselineUp.wallSeconds),
    upToBound: ratio(up.wallSeconds, up.bounds.boundSeconds),
    upToFloor: ratio(up.wallSeconds, up.bounds.floorSeconds),
  };
}

export function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

export function describeSettings(settings: BenchReport["settings"] | SweepReport["settings"]): string {
  return [
    `latency ${settings.latencyMs} ms`,
    `rate limit ${settings.rateLimit === null ? "off" : `${settings.rateLimit}/s (429 hints: ${settings.rateLimitHints})`}`,
    `parallel ${settings.parallel} (${settings.parallelSource})`,
    `pacing ${settings.requestsPerSecond === null ? "off (the default on loopback)" : `${settings.requestsPerSecond}/s`}`,
    `maxConcurrency ${settings.maxConcurrency}`,
    `checkpoints ${settings.skipCheckpoints ? "skipped (PULUMI_SKIP_CHECKPOINTS)" : "after every step"}`,
  ].join(", ");
}

export function describeMachine(machine: Machine): string {
  return `${machine.cpus} CPUs (${machine.cpuModel}), ${Math.round(machine.memoryMiB / 1024)} GiB, Node ${machine.node}, Pulumi ${machine.pulumi}, load ${fixed(machine.loadAverage.start, 2)} → ${fixed(machine.loadAverage.end, 2)}`;
}

function phaseRow(result: PhaseResult): string[] {
  const pulumi = result.runner === "pulumi";
  const engine = result.processes.engine;
  const provider = result.processes.provider;
  return [
    pulumi ? result.phase : `baseline ${result.phase}`,
    fixed(result.wallSeconds, 2),
    String(result.requests),
    fixed(result.requestsPerSecond),
    fixed(result.resourcesPerSecond),
    String(result.rateLimited),
    fixed(result.bounds.boundSeconds, 2),
    fixed(result.bounds.floorSeconds, 2),
    pulumi ? fixed(engine.peakMemoryMiB, 0) : "–",
    pulumi ? fixed(provider.peakMemoryMiB, 0) : "–",
    pulumi ? fixed(engine.cpuSeconds) : "–",
    pulumi ? fixed(provider.cpuSeconds) : "–",
    fixed(result.programCpuSeconds),
    pulumi ? fixed(engine.bytesWritten / MiB) : "–",
    fixed(result.loadAverage, 1),
  ];
}

const PHASE_HEADER = [
  "phase",
  "wall s",
  "requests",
  "req/s",
  "resources/s",
  "429s",
  "bound s",
  "floor s",
  "engine peak MiB",
  "provider peak MiB",
  "engine CPU s",
  "provider CPU s",
  "program CPU s",
  "engine wrote MiB",
  "load",
];

export interface RequestTiming {
  beforeFirstRequestSeconds: number;
  requestSpanSeconds: number;
  afterLastAnswerSeconds: number;
  /** requestSpanSeconds ÷ (requests ÷ rate): how close to the limit's pace the requests themselves ran; null when not rate-limited. */
  spanToRate: number | null;
}

/** Requests per tenant, and time against the rate limit's pace, Pulumi's next to the baseline's. */
function perTenantTable(report: BenchReport): string {
  const limited = report.settings.rateLimit !== null;
  const header = ["phase", "requests per tenant", "baseline requests per tenant"];
  if (limited) {
    header.push(
      "wall ÷ (requests ÷ rate)",
      "baseline wall ÷ (requests ÷ rate)",
      "s before first request",
      "s from first request to last answer",
      "s after last answer",
      "request span ÷ (requests ÷ rate)",
      "429s",
      "baseline 429s",
    );
  }
  const rows = report.phases.map((result) => {
    const baseline = report.baseline.find((candidate) => candidate.phase === result.phase);
    const row = [
      result.phase,
      fixed(result.requestsPerTenant, 2),
      baseline ? fixed(baseline.requestsPerTenant, 2) : "n/a",
    ];
    if (limited) {
      row.push(
        ratioText(result.wallToRate),
        ratioText(baseline?.wallToRate ?? null),
        result.requestTiming ? fixed(result.requestTiming.beforeFirstRequestSeconds, 2) : "n/a",
        result.requestTiming ? fixed(result.requestTiming.requestSpanSeconds, 2) : "n/a",
        result.requestTiming ? fixed(result.requestTiming.afterLastAnswerSeconds, 2) : "n/a",
        ratioText(result.requestTiming?.spanToRate ?? null),
        String(result.rateLimited),
        baseline ? String(baseline.rateLimited) : "n/a",
      );
    }
    return row;
  });
  return table(header, rows);
}

function ratioText(value: number | null): string {
  return value === null ? "n/a" : `${value.toFixed(2)}×`;
}

export function benchMarkdown(report: BenchReport): string {
  const { settings, state } = report;
  const lines = [
    `### ${settings.tenants} tenants × ${settings.domainsPerTenant} domains = ${settings.resources} resources (plan ${settings.plan})`,
    "",
    `${describeSettings(settings)}. ${describeMachine(report.machine)}.`,
    "",
    table(PHASE_HEADER, [...report.phases, ...report.baseline].map(phaseRow)),
    "",
    perTenantTable(report),
    "",
    `- up / baseline: ${times(report.ratios.upToBaseline)}; up / bound: ${times(report.ratios.upToBound)}; up / floor at our concurrency: ${times(report.ratios.upToFloor)}`,
    state
      ? `- state: ${state.checkpointBytes} bytes for ${state.resourcesInCheckpoint} resources in the checkpoint, ${fixed(state.bytesPerResource, 0)} bytes per fleet resource, of which \`__provider\` ${fixed(state.providerBytesPerResource, 0)}`
      : "- state: not a file backend, no checkpoint to measure",
    "- bound: latency × the longest chain of operations that wait for one another, one round trip each (and requests ÷ rate when rate-limited); floor: the bound once requests in flight are capped at min(parallel, maxConcurrency)",
  ];
  return `${lines.join("\n")}\n`;
}

export function sweepMarkdown(report: SweepReport): string {
  const rows = report.rows.map((row) => [
    String(row.tenants),
    String(row.resources),
    fixed(row.up.wallSeconds, 2),
    fixed(row.baselineUp.wallSeconds, 2),
    fixed(row.up.bounds.floorSeconds, 2),
    times(ratio(row.up.wallSeconds, row.baselineUp.wallSeconds)),
    fixed(row.up.resourcesPerSecond),
    String(row.up.requests),
    fixed(row.up.processes.engine.peakMemoryMiB, 0),
    fixed(row.up.processes.provider.peakMemoryMiB, 0),
    fixed(row.up.processes.engine.cpuSeconds),
    fixed(row.up.processes.provider.cpuSeconds),
    fixed(row.up.programCpuSeconds),
    fixed(row.up.processes.engine.bytesWritten / MiB),
    row.state ? fixed(row.state.bytesPerResource, 0) : "n/a",
    fixed(row.destroy.wallSeconds, 2),
    String(row.up.rateLimited + row.destroy.rateLimited),
    fixed(row.up.loadAverage, 1),
  ]);
  const header = [
    "tenants",
    "resources",
    "up s",
    "baseline up s",
    "floor s",
    "up / baseline",
    "resources/s",
    "requests",
    "engine peak MiB",
    "provider peak MiB",
    "engine CPU s",
    "provider CPU s",
    "program CPU s",
    "engine wrote MiB",
    "state bytes/resource",
    "destroy s",
    "429s",
    "load",
  ];
  const domains = report.settings.domainsPerTenant;
  return [
    `### Sweep: up against fleet size (${domains} domains per tenant)`,
    "",
    `${describeSettings(report.settings)}. ${describeMachine(report.machine)}.`,
    "",
    table(header, rows),
    "",
  ].join("\n");
}

/** Time against fleet size: Pulumi's up and destroy, the baseline's up, and the floor. */
export function sweepChart(report: SweepReport): string {
  const { rows, settings } = report;
  const line = (label: string, color: string, y: (row: SweepRow) => number, dashed = false) => ({
    label,
    color,
    dashed,
    points: rows.map((row) => ({ x: row.tenants, y: y(row) })),
  });
  return lineChart({
    title: `pulumi up against fleet size (${settings.domainsPerTenant} domains per tenant, ${settings.latencyMs} ms latency)`,
    xLabel: "tenants (N)",
    yLabel: "seconds",
    series: [
      line("pulumi up", "#1f77b4", (row) => row.up.wallSeconds),
      line("pulumi destroy", "#ff7f0e", (row) => row.destroy.wallSeconds),
      line("baseline up (client, same concurrency)", "#2ca02c", (row) => row.baselineUp.wallSeconds),
      line("floor: latency × requests ÷ concurrency", "#7f7f7f", (row) => row.up.bounds.floorSeconds, true),
    ],
  });
}
