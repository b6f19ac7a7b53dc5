import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { StageRun } from "./model";
import type { DayRates } from "./serviceReads";

// What earlier reports read, kept in the runner's state folder beside the
// last runs' reports (`.dmarc-fleet/page/<fleet>.json`): the whole days'
// pass rates, which do not change once the day is over, and each run's
// policy stages, the fleet's way to `reject`. A folder rather than the
// Pulumi backend: it works whatever the backend, a CI cache restores it,
// and losing it costs one full read, never a wrong cell.

export interface KeptReads {
  rates: DayRates;
  runs: StageRun[];
}

/** Runs kept for the stage trend: a quarter of daily runs. */
const KEPT_RUNS = 92;

function keptFile(stateDir: string, fleet: string): string {
  return join(stateDir, "page", `${fleet}.json`);
}

/** What earlier runs kept; nothing when no run did or the file cannot be read as such. */
export function keptReads(stateDir: string, fleet: string): KeptReads {
  try {
    const kept = JSON.parse(readFileSync(keptFile(stateDir, fleet), "utf8")) as Partial<KeptReads>;
    const rates = typeof kept.rates === "object" && kept.rates !== null ? kept.rates : {};
    return { rates, runs: Array.isArray(kept.runs) ? kept.runs : [] };
  } catch {
    return { rates: {}, runs: [] };
  }
}

/** Keeps the days and runs, the oldest runs dropped; written whole or not at all. */
export function keepReads(stateDir: string, fleet: string, kept: KeptReads): void {
  const file = keptFile(stateDir, fleet);
  mkdirSync(join(stateDir, "page"), { recursive: true });
  writeFileSync(`${file}.tmp`, `${JSON.stringify({ rates: kept.rates, runs: kept.runs.slice(-KEPT_RUNS) })}\n`);
  renameSync(`${file}.tmp`, file);
}
