import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseInventory } from "pulumi-dmarc-partner";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectRoot } from "../../scripts/project.mjs";
import { fleetProjectFolder, serviceClient, uniqueFleetName } from "../fleet/support";
import { type CliResult, startCommand } from "../reliability/harness";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { useEngine } from "../support/engine";
import { type SeedOrganization, seedAccount } from "./seed";

// `dmarc-fleet import` of an account of 200 organisations stopped part-way,
// by SIGKILL (as a cancelled pipeline job is) or by the network going, then
// run again with --append: every organisation ends in the file exactly once.
// Paced at 60 requests a second, so the stop finds the import under way: the
// test looks at the file every 200 ms, a dozen requests (three organisations).

const COUNT = 200;
const PACE = String(60 * 60);
const WAIT_MS = 240_000;

let emulator: EmulatorHandle;
let seeded: string[];
const fleet = uniqueFleetName("resume");
const folder = fleetProjectFolder(`import-resume-${process.pid}`);
const killedPath = join(folder, "killed.yaml");
const cutOffPath = join(folder, "cut-off.yaml");

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
function importedIds(path: string): string[] {
  if (!existsSync(path)) return [];
  const inventory = parseInventory(readFileSync(path, "utf8"), "tenants.yaml");
  return inventory.tenants.flatMap((tenant) => tenant.ids?.organization ?? []);
}

type ImportRun = ReturnType<typeof startCommand>;

async function importRun(path: string, env: Record<string, string>, ...extra: string[]): Promise<ImportRun> {
  const args = ["import", "--fleet", fleet, "--inventory", path, ...extra];
  return startCommand(process.execPath, [join(projectRoot, "provider", "bin", "dmarc-fleet.js"), ...args], folder, env);
}

/**
 * Waits, bounded, until the import has written at least `count` entries to
 * `path`; an import that ends or stays silent first fails the wait with what
 * it printed, so a stuck or crashed run says why.
 */
async function untilWritten(path: string, count: number, run: ImportRun): Promise<void> {
  let ended: CliResult | undefined;
  void run.done.then((result) => {
    ended = result;
  });
  const deadline = Date.now() + WAIT_MS;
  while (importedIds(path).length < count) {
    const written = importedIds(path).length;
    if (ended)
      throw new Error(`the import ended (exit ${ended.code}) with ${written} entries written:\n${ended.stderr}`);
    if (Date.now() > deadline) throw new Error(`the import wrote ${written} entries in ${WAIT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Reruns the import with --append and checks that it read only the rest and left every organisation once. */
async function resumed(path: string, env: Record<string, string>, cut: number): Promise<void> {
  const rerun = await (await importRun(path, env, "--append")).done;
  expect(rerun.code, rerun.stderr).toBe(0);
  // The organisations the file holds are not read again: the rerun's
  // last progress line counts only the rest, all of them written.
  const lines = [...rerun.stderr.matchAll(/import: (\d+)\/(\d+) organisations \((\d+) written/g)];
  const [, done, total, written] = lines.at(-1) ?? [];
  expect([Number(done), Number(total), Number(written)]).toEqual(Array(3).fill(COUNT - cut));
  const ids = importedIds(path);
  expect(ids).toHaveLength(COUNT);
  expect(new Set(ids)).toEqual(new Set(seeded));
}

beforeAll(async () => {
  emulator = await startTestEmulator();
  const specs = Array.from({ length: COUNT }, (_, index) => organization(index + 1));
  seeded = (await seedAccount(serviceClient(emulator), specs, emulator.partner.id)).map((ids) => ids.organization);
  writeFileSync(join(folder, "Pulumi.yaml"), `name: ${fleet}\nruntime: nodejs\n`);
  for (const path of [killedPath, cutOffPath]) rmSync(path, { force: true });
}, 300_000);

afterAll(async () => {
  await emulator?.emulator.close();
});

describe("an import of 200 organisations stopped half-way", () => {
  it("continues with --append where a kill stopped it, writing each organisation exactly once", async () => {
    const env = { ...(await useEngine()), ...emulator.env, DMARC_REQUESTS_PER_MINUTE: PACE };
    const killed = await importRun(killedPath, env);
    await untilWritten(killedPath, COUNT / 2, killed);
    killed.child.kill("SIGKILL");
    await killed.done;
    const cut = importedIds(killedPath).length;
    expect(cut).toBeGreaterThanOrEqual(COUNT / 2);
    expect(cut).toBeLessThan(COUNT);
    await resumed(killedPath, env, cut);
  }, 600_000);

  it("says how to go on when the network goes, and continues with --append once it is back", async () => {
    // Two attempts and a short retry budget: the outage outlasts the client's patience in seconds.
    const env = {
      ...(await useEngine()),
      ...emulator.env,
      DMARC_REQUESTS_PER_MINUTE: PACE,
      DMARC_MAX_ATTEMPTS: "2",
      DMARC_MAX_RETRY_ELAPSED_MS: "2000",
    };
    const stopped = await importRun(cutOffPath, env);
    await untilWritten(cutOffPath, COUNT / 4, stopped);
    const fault = await emulator.control<{ id: string }>("POST", "/faults", { route: "*", dropRate: 1 });
    const outcome = await stopped.done;
    await emulator.control("DELETE", `/faults/${fault.id}`);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain("cut-off.yaml is valid as it stands; run the same import with --append");
    const cut = importedIds(cutOffPath).length;
    expect(outcome.stderr).toContain(`${cut} of them written to cut-off.yaml`);
    expect(cut).toBeGreaterThanOrEqual(COUNT / 4);
    expect(cut).toBeLessThan(COUNT);
    await resumed(cutOffPath, env, cut);
  }, 600_000);
});
