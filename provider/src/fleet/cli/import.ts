import { closeSync, existsSync, fsyncSync, openSync, renameSync, writeSync } from "node:fs";
import { basename } from "node:path";
import type { Writable } from "node:stream";
import { shownPath } from "../../cli/shown";
import { ImportIncomplete, importAccount } from "../../discovery/importer";
import type { ImportProgress, ImportReport } from "../../discovery/report";
import { type Inventory, loadInventory } from "../../inventory/inventory";
import { readTextIfAny } from "../../runtime/readText";
import type { TenantOnDelete } from "../../tenant/tenant";
import { concurrencyOf, type FleetOptions, scanOf, settingsOf } from "../fleetOptions";
import { withFleetPacer } from "../pacer";
import { fleetHoldings } from "../plan/scan";
import { duration } from "../progress";

// `dmarc-fleet import`: the partner's account written as inventory entries
// for this fleet. It reads the service and the fleet's shard stacks, changes
// neither, and writes one file, a batch of organisations at a time, so an
// import cut short goes on where it stopped with `--append`.

/** An import that would do harm or cannot be done as asked; nothing was written. */
export class ImportRefused extends Error {
  override name = "ImportRefused";
}

export interface ImportCommandOptions extends Omit<FleetOptions, "inventory" | "only"> {
  /** The inventory file to write, or to add to with `append`. */
  inventoryPath: string;
  /** Add only organisations that neither the file nor a stack of the backend holds; without it the file must not exist yet. */
  append?: boolean;
  /** Only the organisations with these ids (`--only`). */
  organizations?: readonly string[];
  onDelete?: TenantOnDelete;
  check?: boolean;
}

/** At most one progress line this often, besides the first and the last. */
export const IMPORT_PROGRESS_INTERVAL_MS = 10_000;

function existingInventory(path: string): { text: string; inventory: Inventory } | undefined {
  const text = readTextIfAny(path);
  return text === undefined ? undefined : { text, inventory: loadInventory(path) };
}

/** Writes through a file beside it, on disk before it takes the name, so a reader never sees half a file. */
function writeWhole(path: string, text: string): void {
  const partial = `${path}.partial`;
  const descriptor = openSync(partial, "w");
  try {
    writeSync(descriptor, text);
    fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
  renameSync(partial, path);
}

/** One progress line: how far, at what cost in requests, and the time left at the pace seen so far. */
export function importProgressLine(progress: ImportProgress): string {
  const { done, total, requests, elapsedMs } = progress;
  const perOrganization = done === 0 ? "-" : (requests / done).toFixed(1);
  const perMinute = elapsedMs === 0 ? 0 : Math.round((requests * 60_000) / elapsedMs);
  const left = done === 0 ? Number.NaN : ((elapsedMs / done) * (total - done)) / 1000;
  return [
    `import: ${done}/${total} organisations (${progress.written} written, ${progress.leftOut} left out, ${progress.managed} managed already)`,
    `${requests} requests, ${perOrganization} per organisation, ${perMinute}/min`,
    `${duration(elapsedMs / 1000)} elapsed`,
    `~${duration(left)} left`,
  ].join(" · ");
}

/** Prints the first batch's progress, then at most one line per interval, and the last. */
function progressPrinter(stream: Writable): (progress: ImportProgress) => void {
  let printedAt: number | undefined;
  return (progress) => {
    const now = performance.now();
    const last = progress.done === progress.total;
    if (!last && printedAt !== undefined && now - printedAt < IMPORT_PROGRESS_INTERVAL_MS) return;
    printedAt = now;
    stream.write(`${importProgressLine(progress)}\n`);
  };
}

/** The stopped import's message, with how to go on: the file holds every entry written. */
function continuation(error: ImportIncomplete, options: ImportCommandOptions): Error {
  const written = existsSync(options.inventoryPath);
  const how = written
    ? `${basename(options.inventoryPath)} is valid as it stands; run the same import with --append to continue where it stopped (the organisations it holds are not read again)`
    : "nothing was written; run the same import again";
  return new Error(`${error.message}\n${how}`, { cause: error.cause });
}

/** A new file must not overwrite one. */
function refuseOverwrite(options: ImportCommandOptions): void {
  if (!options.append && existsSync(options.inventoryPath)) {
    throw new ImportRefused(
      `${shownPath(options.inventoryPath)} exists: add the account's new organisations to it with --append, or name another --inventory`,
    );
  }
}

/** A new file must not leave out the fleet's deployed tenants: `up` with it would offboard them. */
function refuseOffboarding(options: ImportCommandOptions, deployedKeys: ReadonlyMap<string, string>): void {
  if (deployedKeys.size === 0) return;
  const shards = [...new Set(deployedKeys.values())].sort();
  throw new ImportRefused(
    `fleet "${options.fleet}" holds ${deployedKeys.size} tenant(s) already (${shards.join(", ")}): an inventory without them would offboard them; add to the fleet's inventory with --append --inventory <its file>`,
  );
}

/**
 * Reads the account and writes its organisations as tenants of the fleet's
 * inventory, a batch of organisations at a time, with progress on
 * `options.progress` (default stderr). Refuses a new file over an existing
 * one, and a new file for a fleet whose shards hold tenants already: `up`
 * with it would offboard them.
 */
export async function runImport(options: ImportCommandOptions): Promise<ImportReport> {
  const { inventoryPath } = options;
  refuseOverwrite(options);
  const existing = options.append ? existingInventory(inventoryPath) : undefined;
  const scan = scanOf(options);
  const holdings = await fleetHoldings(scan, concurrencyOf(options));
  if (!existing) refuseOffboarding(options, holdings.keys);
  const settings = settingsOf(options);
  let report: ImportReport;
  try {
    // Its requests take their turns at the fleet's pace, as a fleet run's own do.
    report = await withFleetPacer(settings, scan.progress, false, () =>
      importAccount({
        settings,
        inventoryName: basename(inventoryPath),
        deployed: holdings,
        write: (text) => writeWhole(inventoryPath, text),
        progress: progressPrinter(scan.progress),
        ...(existing ? { existing } : {}),
        ...(options.organizations ? { only: options.organizations } : {}),
        ...(options.onDelete ? { onDelete: options.onDelete } : {}),
        ...(options.check ? { check: true } : {}),
      }),
    );
  } catch (error) {
    throw error instanceof ImportIncomplete ? continuation(error, options) : error;
  }
  if (report.missing.length > 0) {
    throw new ImportRefused(
      report.missing.map((id) => `--only ${id}: no organisation of this partner has this id`).join("\n"),
    );
  }
  return report;
}
