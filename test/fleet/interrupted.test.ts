import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { type RecoveryTarget, recoverShard, runFleet } from "pulumi-dmarc-partner/fleet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { useEngine } from "../support/engine";
import { backendFolder, dropFleetStacks, fleetOptions, inventoryOf, tenant, uniqueFleetName } from "./support";

// A shard a killed run left with pending operations is never run blindly (a
// plain `up` would drop the pending creates and make duplicates): it is
// reported with the recovery command, or handed to the recovery first.

let emulator: EmulatorHandle;
const fleet = uniqueFleetName("halted");
const inventory = inventoryOf([tenant("romeo", { domains: [] })]);
const shard = `${fleet}-001`;

beforeAll(async () => {
  await useEngine();
  emulator = await startTestEmulator();
});

afterAll(async () => {
  await dropFleetStacks(fleetOptions(emulator, fleet, inventoryOf([])), fleet);
  await emulator?.emulator.close();
});

/**
 * Marks the shard as a killed run leaves it: a create pending in the
 * checkpoint, of its group unless `pending` picks another type. Written into
 * the file backend's checkpoint directly, as the engine does: `pulumi stack
 * import` drops pending operations.
 */
function interrupt(
  options: ReturnType<typeof fleetOptions>,
  pending = (type: string) => type.endsWith(":DomainGroup"),
): void {
  const backend = backendFolder(options);
  const file = join(backend, ".pulumi", "stacks", options.projectName, `${shard}.json`);
  const stored = JSON.parse(readFileSync(file, "utf8")) as {
    checkpoint: { latest: { resources: { type: string }[]; pending_operations?: unknown[] } };
  };
  const resource = stored.checkpoint.latest.resources.find((candidate) => pending(candidate.type));
  if (!resource) throw new Error(`${shard} holds no resource of the type to leave pending`);
  stored.checkpoint.latest.pending_operations = [{ resource, type: "creating" }];
  writeFileSync(file, JSON.stringify(stored));
}

/** The lock a run killed in the file backend leaves: a lock file of a process that is gone. */
function leaveLock(options: ReturnType<typeof fleetOptions>): string {
  const backend = backendFolder(options);
  const folder = join(backend, ".pulumi", "locks", "organization", options.projectName, shard);
  mkdirSync(folder, { recursive: true });
  const lock = join(folder, "killed-run.json");
  writeFileSync(
    lock,
    JSON.stringify({ pid: 2_147_483_646, username: "ci", hostname: hostname(), timestamp: new Date().toISOString() }),
  );
  return lock;
}

/** The shard's checkpoint file in the file backend. */
function checkpointFile(options: ReturnType<typeof fleetOptions>): string {
  const backend = backendFolder(options);
  return join(backend, ".pulumi", "stacks", options.projectName, `${shard}.json`);
}

describe("an interrupted shard", () => {
  it("is reported with the recovery command, or recovered first and then run", async () => {
    const options = fleetOptions(emulator, fleet, inventory);
    expect((await runFleet("up", options)).ok).toBe(true);
    interrupt(options);

    const status = await runFleet("status", fleetOptions(emulator, fleet, inventory));
    expect(status.shards[0]).toMatchObject({ name: shard, upToDate: false, interrupted: "1 pending operation(s)" });

    const refused = await runFleet("up", fleetOptions(emulator, fleet, inventory));
    expect(refused.ok).toBe(false);
    expect(refused.results[0]?.error).toBe(
      `stack ${shard} was interrupted with 1 pending operation(s): run \`npx dmarc-recover --stack ${shard}\` in its work folder, then rerun the fleet`,
    );

    const calls: RecoveryTarget[] = [];
    const recovered = await runFleet(
      "up",
      fleetOptions(emulator, fleet, inventory, {
        // The recovery command itself: the pending create is of a group the state records already, so it is dropped.
        recover: async (target) => {
          calls.push(target);
          return recoverShard(target);
        },
      }),
    );
    expect(recovered.ok).toBe(true);
    expect(calls.map((call) => [call.stackName, call.reason.kind])).toEqual([[shard, "pendingOperations"]]);
    expect(recovered.results[0]).toMatchObject({ shard, status: "done", recovered: "dropped 1" });
  }, 600_000);

  it("killed while the engine made its provider instance is recovered by dropping that create, and then run", async () => {
    const options = fleetOptions(emulator, fleet, inventory);
    interrupt(options, (type) => type.startsWith("pulumi:providers:"));
    const recovered = await runFleet(
      "up",
      fleetOptions(emulator, fleet, inventory, { recover: recoverShard, all: true }),
    );
    expect(recovered.results[0]).toMatchObject({ shard, status: "done", recovered: "dropped 1" });
  }, 600_000);

  it("is handed to the recovery when its lock stops the run, and then run", async () => {
    const renamed = inventoryOf([tenant("romeo", { name: "Romeo Renamed", domains: [] })]);
    const lock = leaveLock(fleetOptions(emulator, fleet, renamed));

    const refused = await runFleet("up", fleetOptions(emulator, fleet, renamed));
    expect(refused.ok).toBe(false);
    expect(refused.results[0]?.error).toMatch(
      new RegExp(
        `^stack ${shard} is locked \\(.*currently locked by 1 lock\\(s\\).*\\): run \`npx dmarc-recover --stack ${shard}\``,
      ),
    );

    const kinds: string[] = [];
    const recovered = await runFleet(
      "up",
      fleetOptions(emulator, fleet, renamed, {
        // The recovery command itself: the lock's process is gone, so the lock is removed.
        recover: async (target) => {
          kinds.push(target.reason.kind);
          return recoverShard(target);
        },
      }),
    );
    expect(kinds).toEqual(["locked"]);
    expect(existsSync(lock)).toBe(false);
    expect(recovered.results[0]).toMatchObject({
      shard,
      status: "done",
      changes: { update: 1 },
      recovered: "removed 1 lock(s) of a dead run",
    });
  }, 600_000);

  it("whose checkpoint a kill cut short, which stops the backend from listing any stack, is recovered before the scan", async () => {
    const options = fleetOptions(emulator, fleet, inventory);
    expect((await runFleet("status", options)).shards[0]?.exists).toBe(true);
    const cases = [
      // Killed between the checkpoint and its attributes: the checkpoint is whole, its attributes empty.
      { cut: `${checkpointFile(options)}.attrs`, summary: "repaired the checkpoint" },
      // Killed while the checkpoint itself was written, on a store without atomic renames: its backup is restored.
      { cut: checkpointFile(options), summary: "repaired the checkpoint" },
    ];
    for (const { cut, summary } of cases) {
      writeFileSync(cut, "");
      await expect(runFleet("status", fleetOptions(emulator, fleet, inventory))).rejects.toThrow();
      const progress = new PassThrough();
      let printed = "";
      progress.on("data", (chunk) => {
        printed += String(chunk);
      });
      const up = await runFleet("up", fleetOptions(emulator, fleet, inventory, { recover: recoverShard, progress }));
      expect(up.ok).toBe(true);
      expect(printed).toContain(`${shard}: its checkpoint was cut short; recovered first: ${summary}`);
      expect((await runFleet("status", fleetOptions(emulator, fleet, inventory))).shards[0]?.exists).toBe(true);
    }
  }, 600_000);
});
