import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FleetCommand } from "./fleetOptions";
import type { FleetReport } from "./fleetReport";

// Each command's last report, kept as JSON in the runner's state folder, so
// a later step of the same pipeline (`report` after `drift`) can show what
// that run found without running it again.

/** One file per fleet and command: fleets of one project share its state folder. */
function reportFile(stateDir: string, fleet: string, command: FleetCommand): string {
  return join(stateDir, "last", `${fleet}.${command}.json`);
}

/** The commands whose last report another command reads; `status` and `shards` find nothing a scan would not. */
const KEPT_COMMANDS: readonly FleetCommand[] = ["preview", "up", "refresh", "drift", "destroy"];

/** Keeps the report, with the time it was made; written whole or not at all, so a reader never sees half a file. */
export function keepLastReport(stateDir: string, report: FleetReport, at: Date = new Date()): void {
  if (!KEPT_COMMANDS.includes(report.command)) return;
  const file = reportFile(stateDir, report.fleet, report.command);
  mkdirSync(join(stateDir, "last"), { recursive: true });
  writeFileSync(`${file}.tmp`, `${JSON.stringify({ at: at.toISOString(), report })}\n`);
  renameSync(`${file}.tmp`, file);
}

/** A report kept by {@link keepLastReport}, and when it was made. */
export interface KeptReport {
  at: string;
  report: FleetReport;
}

/** The command's last kept report; undefined when none was kept or the file cannot be read as one. */
export function lastReport(stateDir: string, fleet: string, command: FleetCommand): KeptReport | undefined {
  try {
    const kept = JSON.parse(readFileSync(reportFile(stateDir, fleet, command), "utf8")) as Partial<KeptReport>;
    return typeof kept.at === "string" && kept.report?.command === command ? (kept as KeptReport) : undefined;
  } catch {
    return undefined;
  }
}
