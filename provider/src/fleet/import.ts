import { existsSync, renameSync, writeFileSync } from "node:fs";
import { basename } from "node:path";
import { importAccount } from "../discovery/importer";
import type { ImportReport } from "../discovery/report";
import { type Inventory, loadInventory } from "../inventory/inventory";
import { readTextIfAny } from "../runtime/readText";
import type { TenantOnDelete } from "../tenant/tenant";
import { type FleetOptions, settingsOf } from "./fleetOptions";
import { fleetHoldings } from "./scan";

// `dmarc-fleet import`: the partner's account written as inventory entries
// for this fleet. It reads the service and the fleet's shard stacks, changes
// neither, and writes one file.

/** An import that would do harm or cannot be done as asked; nothing was written. */
export class ImportRefused extends Error {
  override name = "ImportRefused";
}

export interface ImportCommandOptions extends Omit<FleetOptions, "inventory"> {
  /** The inventory file to write, or to add to with `append`. */
  inventoryPath: string;
  /** Add only organisations that neither the file nor a shard holds; without it the file must not exist yet. */
  append?: boolean;
  only?: readonly string[];
  onDelete?: TenantOnDelete;
  check?: boolean;
}

function existingInventory(path: string): { text: string; inventory: Inventory } | undefined {
  const text = readTextIfAny(path);
  return text === undefined ? undefined : { text, inventory: loadInventory(path) };
}

/** Writes through a file beside it, so a reader never sees half a file. */
function writeWhole(path: string, text: string): void {
  const partial = `${path}.partial`;
  writeFileSync(partial, text);
  renameSync(partial, path);
}

/**
 * Reads the account and writes its organisations as tenants of the fleet's
 * inventory. Refuses a new file over an existing one, and a new file for a
 * fleet whose shards hold tenants already: `up` with it would offboard them.
 */
export async function runImport(options: ImportCommandOptions): Promise<ImportReport> {
  const { inventoryPath } = options;
  if (!options.append && existsSync(inventoryPath)) {
    throw new ImportRefused(
      `${inventoryPath} exists: add the account's new organisations to it with --append, or name another --inventory`,
    );
  }
  const existing = options.append ? existingInventory(inventoryPath) : undefined;
  const empty: Inventory = { tenants: [], offboard: [], source: basename(inventoryPath) };
  const holdings = await fleetHoldings({ ...options, inventory: existing?.inventory ?? empty });
  if (!existing && holdings.keys.size > 0) {
    const shards = [...new Set(holdings.keys.values())].sort();
    throw new ImportRefused(
      `fleet "${options.fleet}" holds ${holdings.keys.size} tenant(s) already (${shards.join(", ")}): an inventory without them would offboard them; add to the fleet's inventory with --append --inventory <its file>`,
    );
  }
  const { report, text } = await importAccount({
    settings: settingsOf(options),
    inventoryName: basename(inventoryPath),
    deployed: holdings,
    ...(existing ? { existing } : {}),
    ...(options.only ? { only: options.only } : {}),
    ...(options.onDelete ? { onDelete: options.onDelete } : {}),
    ...(options.check ? { check: true } : {}),
  });
  if (report.missing.length > 0) {
    throw new ImportRefused(
      report.missing.map((id) => `--only ${id}: no organisation of this partner has this id`).join("\n"),
    );
  }
  if (text !== undefined) writeWhole(inventoryPath, text);
  return report;
}
