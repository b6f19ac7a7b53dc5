import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseInventory } from "pulumi-dmarc-partner";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectRoot } from "../../scripts/engine.mjs";
import { fleetProjectFolder, serviceClient, uniqueFleetName } from "../fleet/support";
import { startCommand } from "../reliability/harness";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { useEngine } from "../support/engine";
import { type SeedOrganization, seedAccount } from "./seed";

// `dmarc-fleet import` of an account of 200 organisations killed at about
// half (SIGKILL, as a cancelled pipeline job does), then run again with
// --append: every organisation ends in the file exactly once. Paced at 20
// requests a second, so the kill finds the import under way.

const COUNT = 200;
const WAIT_MS = 240_000;

let emulator: EmulatorHandle;
let seeded: string[];
const fleet = uniqueFleetName("resume");
const folder = fleetProjectFolder(`import-resume-${process.pid}`);
const inventoryPath = join(folder, "tenants.yaml");

function organization(index: number): SeedOrganization {
  const name = `Resume ${String(index).padStart(3, "0")}`;
  return {
    name,
    groups: [{ name: "Main", domains: [{ name: `resume-${index}.example` }] }],
    subscription: { plan: "Starter" },
    expected: "entry",
  };
}

/** The organisation ids of the file's tenants; none while the file does not exist. */
function importedIds(): string[] {
  if (!existsSync(inventoryPath)) return [];
  const inventory = parseInventory(readFileSync(inventoryPath, "utf8"), "tenants.yaml");
  return inventory.tenants.flatMap((tenant) => tenant.ids?.organization ?? []);
}

async function importRun(env: Record<string, string>, ...extra: string[]) {
  const args = ["import", "--fleet", fleet, "--inventory", inventoryPath, ...extra];
  return startCommand(process.execPath, [join(projectRoot, "provider", "bin", "dmarc-fleet.js"), ...args], folder, env);
}

beforeAll(async () => {
  emulator = await startTestEmulator();
  const specs = Array.from({ length: COUNT }, (_, index) => organization(index + 1));
  seeded = (await seedAccount(serviceClient(emulator), specs, emulator.partner.id)).map((ids) => ids.organization);
  writeFileSync(join(folder, "Pulumi.yaml"), `name: ${fleet}\nruntime: nodejs\n`);
  rmSync(inventoryPath, { force: true });
}, 300_000);

afterAll(async () => {
  await emulator?.emulator.close();
});

describe("an import of 200 organisations killed half-way", () => {
  it("continues with --append where it stopped, writing each organisation exactly once", async () => {
    const env = { ...(await useEngine()), ...emulator.env, DMARC_REQUESTS_PER_MINUTE: "1200" };
    const killed = await importRun(env);
    const deadline = Date.now() + WAIT_MS;
    while (importedIds().length < COUNT / 2) {
      if (Date.now() > deadline) throw new Error(`the import wrote ${importedIds().length} entries in ${WAIT_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    killed.child.kill("SIGKILL");
    await killed.done;
    const cut = importedIds();
    expect(cut.length).toBeGreaterThanOrEqual(COUNT / 2);
    expect(cut.length).toBeLessThan(COUNT);

    const resumed = await (await importRun(env, "--append")).done;
    expect(resumed.code, resumed.stderr).toBe(0);
    // The organisations the file holds are not read again: the rerun's
    // last progress line counts only the rest, all of them written.
    const lines = [...resumed.stderr.matchAll(/import: (\d+)\/(\d+) organisations \((\d+) written/g)];
    const [, done, total, written] = lines.at(-1) ?? [];
    expect([Number(done), Number(total), Number(written)]).toEqual(Array(3).fill(COUNT - cut.length));
    const ids = importedIds();
    expect(ids).toHaveLength(COUNT);
    expect(new Set(ids)).toEqual(new Set(seeded));
  }, 600_000);
});
