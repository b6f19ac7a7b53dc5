import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { FleetSweepRow } from "./fleetSweep";
import { type BenchOptions, UNCOMPARED } from "./options";
import type { BenchReport, PhaseResult, SweepReport } from "./report";
import type { StateFootprint } from "./state";

// A run's figures by name, read back from the report it wrote, so that two
// runs (this checkout and another commit, or this run and the last
// release's) are compared figure by figure. Every figure is one where less
// is better: seconds, CPU seconds, peak memory, requests, bytes and ratios to
// the raw script.

export type Figures = Record<string, number>;

/** The benches whose figures are compared; the others' reports are not read back. */
export type ComparedKind = "bench" | "sweep" | "fleet";

export function comparedKind(options: BenchOptions): ComparedKind | undefined {
  if (UNCOMPARED.some((flag) => options[flag])) return undefined;
  return options.fleet ? "fleet" : options.sweep ? "sweep" : "bench";
}

/**
 * What a run measured, as one line: the bench and every setting that moves
 * its figures. Runs of one workload are comparable; the defaults that depend
 * on the machine (Pulumi's --parallel, the fleet's shards at once) are named
 * as defaults, and the machine is recorded beside the figures.
 */
export function workloadOf(options: BenchOptions, kind: ComparedKind): string {
  const sizes = options.sweep ?? [options.tenants];
  const parts = [
    `${kind}: ${sizes.join(", ")} tenants × ${options.domains} domains`,
    `latency ${options.latencyMs} ms`,
    options.rateLimit === undefined ? "no rate limit" : `rate limit ${options.rateLimit}/s (${options.rateLimitHints})`,
    options.pace === undefined ? "unpaced" : `paced ${options.pace}/s`,
    `parallel ${options.parallelFlag ?? "default"}`,
    `maxConcurrency ${options.maxConcurrency ?? "default"}`,
    ...(options.skipCheckpoints ? ["checkpoints skipped"] : []),
    ...(kind === "fleet"
      ? [`shards of ${options.shardSize ?? "default"}`, `${options.concurrency ?? "default"} at once`]
      : []),
  ];
  return parts.join(", ");
}

/** The report file each compared bench writes to its output folder. */
const REPORT_FILE: Record<ComparedKind, string> = {
  bench: "report.json",
  sweep: "sweep.json",
  fleet: "fleet-sweep.json",
};

/** CPU of everything a phase ran: the bench's own process and every child that ended, counted whole. */
function allCpu(result: PhaseResult): number {
  return result.programCpuSeconds + result.endedChildrenCpuSeconds;
}

function stateFigure(state: StateFootprint | null | undefined, name: string): Figures {
  return state ? { [name]: state.bytesPerResource } : {};
}

/** A Pulumi phase's wall time, CPU by process and requests, each named after `label`. */
function phaseFigures(label: string, result: PhaseResult, runner: "runner" | "program"): Figures {
  return {
    [`${label} s`]: result.wallSeconds,
    [`${label} engine CPU s`]: result.processes.engine.cpuSeconds,
    [`${label} provider CPU s`]: result.processes.provider.cpuSeconds,
    [`${label} ${runner} CPU s`]: result.programCpuSeconds,
    [`${label} CPU s, every process`]: allCpu(result),
    [`${label} engine peak MiB`]: result.processes.engine.peakMemoryMiB,
    [`${label} requests`]: result.requests,
  };
}

function benchFigures(report: BenchReport): Figures {
  const figures: Figures = {};
  for (const result of report.phases) Object.assign(figures, phaseFigures(result.phase, result, "program"));
  const baselineUp = report.baseline.find((result) => result.phase === "up");
  if (baselineUp) figures["raw script up s"] = baselineUp.wallSeconds;
  if (report.ratios.upToBaseline !== null) figures["up ÷ raw script up"] = report.ratios.upToBaseline;
  return { ...figures, ...stateFigure(report.state, "state bytes per resource") };
}

function sweepFigures(report: SweepReport): Figures {
  const figures: Figures = {};
  for (const row of report.rows) {
    const at = `${row.tenants} tenants:`;
    Object.assign(figures, phaseFigures(`${at} up`, row.up, "program"), {
      [`${at} destroy s`]: row.destroy.wallSeconds,
      [`${at} raw script up s`]: row.baselineUp.wallSeconds,
      [`${at} up ÷ raw script up`]: row.up.wallSeconds / row.baselineUp.wallSeconds,
      ...stateFigure(row.state, `${at} state bytes per resource`),
    });
  }
  return figures;
}

function fleetFigures(rows: readonly FleetSweepRow[]): Figures {
  const figures: Figures = {};
  for (const row of rows) {
    const at = `${row.tenants} tenants:`;
    Object.assign(
      figures,
      phaseFigures(`${at} fleet up`, row.fleetUp, "runner"),
      { [`${at} fleet no-change preview s`]: row.fleetPreview.wallSeconds },
      { [`${at} fleet one-tenant preview s`]: row.fleetOneTenantPreview.wallSeconds },
      phaseFigures(`${at} fleet drift`, row.fleetDrift, "runner"),
      { [`${at} fleet audited drift s`]: row.fleetAuditedDrift.wallSeconds },
      phaseFigures(`${at} fleet destroy`, row.fleetDestroy, "runner"),
      {
        [`${at} raw script up s`]: row.baselineUp.wallSeconds,
        [`${at} fleet up ÷ raw script up`]: row.fleetUp.wallSeconds / row.baselineUp.wallSeconds,
      },
      row.singleUp ? { [`${at} single stack up s`]: row.singleUp.wallSeconds } : {},
      stateFigure(row.state, `${at} fleet state bytes per resource`),
    );
  }
  return figures;
}

/** The figures of a report as the bench wrote it (the parsed JSON of its {@link REPORT_FILE}). */
export function figuresFrom(kind: ComparedKind, report: unknown): Figures {
  if (kind === "bench") return benchFigures(report as BenchReport);
  if (kind === "sweep") return sweepFigures(report as SweepReport);
  return fleetFigures((report as { rows: FleetSweepRow[] }).rows);
}

/** The figures of the run that wrote its report to `outDir`. */
export function figuresOf(kind: ComparedKind, outDir: string): Figures {
  const path = join(outDir, REPORT_FILE[kind]);
  if (!existsSync(path)) throw new Error(`the bench wrote no ${REPORT_FILE[kind]} to ${outDir}`);
  return figuresFrom(kind, JSON.parse(readFileSync(path, "utf8")));
}

/** The median of each figure over several runs (a figure some runs lack is left out), with its range. */
export interface Summary {
  median: number;
  min: number;
  max: number;
}

export function summarize(runs: readonly Figures[]): Record<string, Summary> {
  const names = Object.keys(runs[0] ?? {}).filter((name) => runs.every((run) => name in run));
  return Object.fromEntries(
    names.map((name) => {
      const values = runs.map((run) => run[name] as number).sort((a, b) => a - b);
      const middle = Math.floor(values.length / 2);
      const median =
        values.length % 2 === 1
          ? (values[middle] as number)
          : ((values[middle - 1] as number) + (values[middle] as number)) / 2;
      return [name, { median, min: values[0] as number, max: values.at(-1) as number }];
    }),
  );
}

/** How much worse a figure may be than the one it is compared with before it is flagged. */
const WORSE_BY = 0.1;

/** `current ÷ reference`; null where the reference is 0 (a phase that sent no request). */
export function ratioOf(current: number, reference: number): number | null {
  return reference > 0 ? current / reference : null;
}

export function isWorse(current: number, reference: number): boolean {
  const ratio = ratioOf(current, reference);
  return ratio !== null && ratio >= 1 + WORSE_BY;
}

/** A figure as the tables show it: seconds and ratios to two places, counts and bytes whole. */
export function shown(name: string, value: number): string {
  if (/requests$|bytes per resource$|MiB$/.test(name)) return Math.round(value).toLocaleString("en-US");
  return value.toFixed(2);
}
