import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg, release, totalmem, type } from "node:os";
import { type Figures, isWorse, ratioOf, shown } from "./figures";
import { table } from "./report";

// bench/baseline.json: the last release's figures per workload, made by the
// bench (`--save-baseline`, with `--against <the release's commit>` from a
// later checkout) on a machine it describes. Every compared run prints its
// figures beside them and flags each one 10% worse or more; the file is
// made again at each release.

/** The machine a baseline was measured on: its figures hold for that machine only. */
export interface MachineDescription {
  os: string;
  cpus: number;
  cpuModel: string;
  memoryMiB: number;
  node: string;
  pulumi: string;
  /** The 1-minute load average when the figures were saved: other work on the machine moves them. */
  loadAverage: number;
}

export interface BaselineEntry {
  /** What was measured ({@link workloadOf}): only a run of the same workload is compared with it. */
  workload: string;
  /** The package's version at the measured commit. */
  release: string;
  commit: string;
  measuredAt: string;
  machine: MachineDescription;
  /** Runs the figures are the medians of. */
  rounds: number;
  figures: Figures;
}

interface BaselineFile {
  about: string;
  entries: BaselineEntry[];
}

const ABOUT =
  "The last release's benchmark figures per workload, made by `npm run bench -- --against <release commit> <workload> --save-baseline`; each run of the same workload prints its figures beside them (bench/README.md).";

export function machineDescription(pulumi: string): MachineDescription {
  return {
    os: `${type()} ${release()}`,
    cpus: availableParallelism(),
    cpuModel: cpus()[0]?.model.trim() ?? "unknown",
    memoryMiB: Math.round(totalmem() / 1024 / 1024),
    node: process.versions.node,
    pulumi,
    loadAverage: Math.round((loadavg()[0] ?? 0) * 100) / 100,
  };
}

export function readBaselines(path: string): BaselineEntry[] {
  if (!existsSync(path)) return [];
  return (JSON.parse(readFileSync(path, "utf8")) as BaselineFile).entries;
}

/** Adds `entry` to the file, in place of the entry of the same workload. */
export function saveBaseline(path: string, entry: BaselineEntry): void {
  // Thousandths: more digits would be float noise in a file people read.
  const figures = Object.fromEntries(
    Object.entries(entry.figures).map(([name, value]) => [name, Math.round(value * 1000) / 1000]),
  );
  const kept = readBaselines(path).filter((known) => known.workload !== entry.workload);
  const entries = [...kept, { ...entry, figures }];
  entries.sort((a, b) => a.workload.localeCompare(b.workload));
  writeFileSync(path, `${JSON.stringify({ about: ABOUT, entries } satisfies BaselineFile, null, 2)}\n`);
}

function describeEntry(entry: BaselineEntry): string {
  const { machine } = entry;
  return `${entry.release} (${entry.commit.slice(0, 7)}), measured ${entry.measuredAt.slice(0, 10)}, median of ${entry.rounds} on ${machine.cpus} CPUs (${machine.cpuModel}), ${Math.round(machine.memoryMiB / 1024)} GiB, ${machine.os}, Node ${machine.node}, Pulumi ${machine.pulumi}, load ${machine.loadAverage}`;
}

/** A flag for a figure at least 10% worse than the one it is compared with. */
export function worseFlag(current: number, reference: number): string {
  const ratio = ratioOf(current, reference);
  return ratio !== null && isWorse(current, reference) ? `**${Math.round((ratio - 1) * 100)}% worse**` : "";
}

/** This run's figures beside the last release's of the same workload, or a line saying there are none. */
export function beside(entries: readonly BaselineEntry[], workload: string, figures: Figures): string {
  const entry = entries.find((known) => known.workload === workload);
  if (!entry) {
    return `No figures of the last release for this workload in bench/baseline.json (${workload}); \`--save-baseline\` writes them.\n`;
  }
  const rows = Object.entries(figures).flatMap(([name, value]) => {
    const reference = entry.figures[name];
    if (reference === undefined) return [];
    const ratio = ratioOf(value, reference);
    return [
      [
        name,
        shown(name, reference),
        shown(name, value),
        ratio === null ? "-" : `${ratio.toFixed(2)}×`,
        worseFlag(value, reference),
      ],
    ];
  });
  const worse = rows.filter((row) => row[4] !== "").length;
  return [
    `### Against the last release (bench/baseline.json: ${describeEntry(entry)})`,
    "",
    `${workload}. ${worse === 0 ? "No figure is 10% worse or more." : `${worse} figure(s) 10% worse or more.`} On a shared machine a run's times move more than that: \`--against\` runs both sides alternately.`,
    "",
    table(["figure", "last release", "this run", "this ÷ release", ""], rows),
    "",
  ].join("\n");
}
