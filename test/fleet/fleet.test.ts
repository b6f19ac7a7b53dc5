import type { DmarcClient } from "pulumi-dmarc-partner/client";
import { type FleetOptions, type FleetReport, runFleet } from "pulumi-dmarc-partner/fleet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { useEngine } from "../support/engine";
import {
  dropFleetStacks,
  type Entry,
  fleetOptions,
  fleetStackNames,
  inventoryOf,
  organizationsByName,
  serviceClient,
  tenant,
  uniqueFleetName,
} from "./support";

// The fleet runner end to end: the real engine, shard stacks in the file
// backend, the in-process emulator. One fleet goes through its life in order:
// deployed, grown, renamed, a shard failing and rerun, shrunk.

let emulator: EmulatorHandle;
let client: DmarcClient;
const fleet = uniqueFleetName("fleet");

function resultsByShard(report: FleetReport): Record<string, { status: string; changes: Record<string, number> }> {
  return Object.fromEntries(
    report.results.map((result) => [result.shard, { status: result.status, changes: result.changes }]),
  );
}

async function run(
  command: "preview" | "up" | "shards",
  tenants: Entry[],
  extra: Partial<FleetOptions> = {},
): Promise<FleetReport> {
  return runFleet(command, fleetOptions(emulator, fleet, inventoryOf(tenants), extra));
}

function fleetStacks(): string[] {
  return fleetStackNames(fleetOptions(emulator, fleet, inventoryOf([])), fleet);
}

const a = tenant("alpha");
const b = tenant("bravo");
const c = tenant("charlie");
const d = tenant("delta");

beforeAll(async () => {
  await useEngine();
  emulator = await startTestEmulator();
  client = serviceClient(emulator);
});

afterAll(async () => {
  await dropFleetStacks(fleetOptions(emulator, fleet, inventoryOf([])), fleet);
  await emulator?.emulator.close();
});

describe("a fleet of shard stacks", () => {
  it("deploys a small inventory as shards of at most the shard size", async () => {
    const before = await emulator.control<{ byRoute: Record<string, number> }>("GET", "/stats");
    const report = await run("up", [a, b, c]);
    expect(report.ok).toBe(true);
    // The runner reads the catalogue once for every shard: the shards' programs send nothing outside their budget.
    const after = await emulator.control<{ byRoute: Record<string, number> }>("GET", "/stats");
    expect((after.byRoute["GET /v1/partners/plans"] ?? 0) - (before.byRoute["GET /v1/partners/plans"] ?? 0)).toBe(1);
    expect(report.shards.map((shard) => [shard.name, shard.tenants])).toEqual([
      [`${fleet}-001`, ["alpha", "bravo"]],
      [`${fleet}-002`, ["charlie"]],
    ]);
    expect(report.results.map((result) => result.status)).toEqual(["done", "done"]);
    const organizations = await organizationsByName(client);
    expect([...organizations.keys()]).toEqual(
      expect.arrayContaining(["Tenant alpha", "Tenant bravo", "Tenant charlie"]),
    );
    expect(fleetStacks()).toEqual([`${fleet}-001`, `${fleet}-002`]);
  }, 600_000);

  it("places a new tenant without moving another: the other shards' previews show no changes", async () => {
    // --all: shard 001 is up to date, which a plain preview skips (test/fleet/previewSkips.test.ts).
    const preview = await run("preview", [a, b, c, d], { all: true });
    const byShard = resultsByShard(preview);
    expect(byShard[`${fleet}-001`]?.changes).toEqual({ same: expect.any(Number) });
    expect(byShard[`${fleet}-002`]?.changes.create).toBeGreaterThan(0);
    expect(preview.shards.find((shard) => shard.name === `${fleet}-002`)?.tenants).toEqual(["charlie", "delta"]);

    const up = await run("up", [a, b, c, d]);
    expect(resultsByShard(up)[`${fleet}-001`]?.status).toBe("skipped");
    expect(resultsByShard(up)[`${fleet}-002`]?.status).toBe("done");
  }, 600_000);

  it("keeps a tenant in its shard when a tenant before it in the file is inserted", async () => {
    const shards = await run("shards", [tenant("echo"), a, b, c, d]);
    expect(shards.shards.map((shard) => [shard.name, shard.tenants])).toEqual([
      [`${fleet}-001`, ["alpha", "bravo"]],
      [`${fleet}-002`, ["charlie", "delta"]],
      [`${fleet}-003`, ["echo"]],
    ]);
  }, 600_000);

  it("renames a tenant in place when its key stays", async () => {
    const before = (await organizationsByName(client)).get("Tenant alpha");
    const report = await run("up", [{ ...a, name: "Alpha Renamed" }, b, c, d]);
    expect(resultsByShard(report)[`${fleet}-001`]).toMatchObject({ status: "done", changes: { update: 1 } });
    expect(resultsByShard(report)[`${fleet}-002`]?.status).toBe("skipped");
    const after = await organizationsByName(client);
    expect(after.get("Alpha Renamed")).toBe(before);
    expect(after.has("Tenant alpha")).toBe(false);
  }, 600_000);

  it("fails only the shard a fault hits, and a rerun finishes it alone", async () => {
    const renamed = { ...a, name: "Alpha Renamed" };
    const fault = await emulator.control<{ id: string }>("POST", "/faults", {
      route: "POST /v1/domains",
      errorRate: 1,
      errorStatus: 503,
    });
    // Bravo's rename (shard 001, no domain created) runs alongside the new shard whose domain create fails.
    const withFoxtrot = [
      renamed,
      { ...b, name: "Bravo Renamed" },
      c,
      d,
      tenant("foxtrot"),
      { ...b, key: "golf", name: "Golf", domains: [] },
    ];
    const failing = await run("up", withFoxtrot);
    await emulator.control("DELETE", `/faults/${fault.id}`);
    expect(failing.ok).toBe(false);
    const byShard = resultsByShard(failing);
    expect(byShard[`${fleet}-003`]?.status).toBe("failed");
    expect(byShard[`${fleet}-001`]).toMatchObject({ status: "done", changes: { update: 1 } });
    expect(byShard[`${fleet}-002`]?.status).toBe("skipped");
    const failed = failing.results.find((result) => result.status === "failed");
    expect(failed?.error).toMatch(/503|Service Unavailable|unavailable/i);
    expect(failed?.log).toMatch(/\.log$/);

    const rerun = await run("up", withFoxtrot);
    expect(rerun.ok).toBe(true);
    expect(resultsByShard(rerun)[`${fleet}-003`]?.status).toBe("done");
    expect(rerun.results.filter((result) => result.status === "done").map((result) => result.shard)).toEqual([
      `${fleet}-003`,
    ]);
    expect((await organizationsByName(client)).has("Tenant foxtrot")).toBe(true);
  }, 600_000);

  it("offboards approved tenants and removes the stack of a shard they leave empty", async () => {
    const renamed = { ...a, name: "Alpha Renamed" };
    const foxtrot = tenant("foxtrot");
    const golf = { ...b, key: "golf", name: "Golf", domains: [] };
    const report = await run("up", [renamed, { ...b, name: "Bravo Renamed" }, foxtrot, golf], {
      allowOffboard: ["charlie", "delta"],
    });
    expect(report.ok).toBe(true);
    const emptied = report.results.find((result) => result.shard === `${fleet}-002`);
    expect(emptied).toMatchObject({ status: "done", removed: true });
    expect(emptied?.changes.delete).toBeGreaterThan(0);
    const organizations = await organizationsByName(client);
    expect(organizations.has("Tenant charlie")).toBe(false);
    expect(organizations.has("Tenant delta")).toBe(false);
    expect(fleetStacks()).toEqual([`${fleet}-001`, `${fleet}-003`]);
  }, 600_000);
});
