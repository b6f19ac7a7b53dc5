import { LocalWorkspace } from "@pulumi/pulumi/automation";
import type { DmarcClient } from "pulumi-dmarc-partner/client";
import {
  exitCodeOf,
  FLEET_EXIT,
  type FleetOptions,
  type FleetReport,
  runFleet,
  type TenantFindings,
} from "pulumi-dmarc-partner/fleet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { useEngine } from "../support/engine";
import {
  dropFleetStacks,
  findingsOutline,
  fleetOptions,
  inventoryOf,
  organizationIdNamed,
  organizationsByName,
  requestsDuring,
  serviceClient,
  tenant,
  uniqueFleetName,
} from "./support";

// Drift on a fleet of three shards (shard size 2): objects changed and
// deleted through the service's own API, an organisation made outside the
// fleet; seen by `drift` without writing any state, healed by `up` where
// drift was found, by `up --refresh`, and by `up` after `refresh`.

let emulator: EmulatorHandle;
let client: DmarcClient;
const fleet = uniqueFleetName("drift");
const keys = ["alpha", "bravo", "charlie", "delta", "echo"];

function options(extra: Partial<FleetOptions> = {}): FleetOptions {
  return fleetOptions(emulator, fleet, inventoryOf(keys.map((key) => tenant(key))), extra);
}

function outline(tenants: readonly TenantFindings[]): Record<string, string[]> {
  return findingsOutline(tenants, ["differs", "missing", "created", "updated"]);
}

/** A shard's resources as the backend holds them. */
async function shardResources(shard: string): Promise<unknown> {
  const options = fleetOptions(emulator, fleet, inventoryOf([]));
  const workspace = await LocalWorkspace.create({
    workDir: options.projectDir,
    envVars: options.env,
    projectSettings: { name: options.projectName, runtime: "nodejs" },
  });
  return (await workspace.exportStack(`${fleet}-${shard}`)).deployment.resources;
}

function drifted(report: FleetReport): string[] {
  return report.shards.filter((shard) => shard.drift !== undefined).map((shard) => shard.name);
}

beforeAll(async () => {
  await useEngine();
  emulator = await startTestEmulator();
  client = serviceClient(emulator);
  const up = await runFleet("up", options());
  expect(up.results.map((result) => result.status)).toEqual(["done", "done", "done"]);
}, 600_000);

afterAll(async () => {
  await dropFleetStacks(fleetOptions(emulator, fleet, inventoryOf([])), fleet);
  await emulator?.emulator.close();
});

describe("drift", () => {
  it("finds none on a fresh fleet, for what a refresh costs plus the account listing", async () => {
    const drift = await requestsDuring(emulator, () => runFleet("drift", options()));
    expect(drift.report.ok).toBe(true);
    expect(drift.report.tenants).toEqual([]);
    expect(drift.report.unmanaged).toEqual({ managed: 5, total: 5, organizations: [] });
    expect(exitCodeOf(drift.report, invocation(drift.report))).toBe(FLEET_EXIT.ok.code);
    const refresh = await requestsDuring(emulator, () => runFleet("refresh", options()));
    expect(refresh.report.ok).toBe(true);
    // One page of organisations and the runner's own token on top of the shards' reads.
    expect(drift.requests).toBeLessThanOrEqual(refresh.requests + 2);
    expect(drift.requests).toBeGreaterThan(2);
  }, 600_000);

  it("names an object deleted and one changed outside the fleet, and an organisation made outside it, writing no state", async () => {
    await client.deleteDomain(await organizationIdNamed(client, "Tenant bravo"), "bravo.example");
    await client.updateOrganization(await organizationIdNamed(client, "Tenant delta"), { name: "Renamed by hand" });
    const outsider = await client.createOrganization({ name: "Made by hand" });
    const before = [await shardResources("001"), await shardResources("002")];

    const drift = await runFleet("drift", options());
    expect(drift.ok).toBe(true);
    expect(exitCodeOf(drift, invocation(drift))).toBe(FLEET_EXIT.drift.code);
    expect(outline(drift.tenants)).toEqual({
      bravo: ["missing Domain bravo.example"],
      delta: ["differs Organization delta name: Tenant delta -> Renamed by hand"],
    });
    expect(drift.tenants.map((found) => found.shard)).toEqual([`${fleet}-001`, `${fleet}-002`]);
    expect(drift.unmanaged).toEqual({
      managed: 5,
      total: 6,
      organizations: [{ id: outsider.id, name: "Made by hand" }],
    });
    expect([await shardResources("001"), await shardResources("002")]).toEqual(before);
    expect(drifted(await runFleet("status", options()))).toEqual([`${fleet}-001`, `${fleet}-002`]);
  }, 600_000);

  it("is healed by up in the shards drift marked only: the deleted object recreated, the changed one set back", async () => {
    const up = await runFleet("up", options());
    expect(up.ok).toBe(true);
    expect(up.results.map((result) => [result.shard, result.status])).toEqual([
      [`${fleet}-003`, "skipped"],
      [`${fleet}-001`, "done"],
      [`${fleet}-002`, "done"],
    ]);
    expect(outline(up.tenants)).toEqual({
      bravo: ["created Domain bravo.example", "missing Domain bravo.example"],
      delta: [
        "differs Organization delta name: Tenant delta -> Renamed by hand",
        "updated Organization delta name: Renamed by hand -> Tenant delta",
      ],
    });
    expect(await client.getDomain(await organizationIdNamed(client, "Tenant bravo"), "bravo.example")).toBeDefined();
    expect((await organizationsByName(client)).has("Renamed by hand")).toBe(false);
    expect(drifted(await runFleet("status", options()))).toEqual([]);
  }, 600_000);

  it("is healed by up --refresh with no drift run before it", async () => {
    const echo = await organizationIdNamed(client, "Tenant echo");
    await client.deleteDomain(echo, "echo.example");
    const up = await runFleet("up", options({ refresh: true }));
    expect(up.ok).toBe(true);
    expect(outline(up.tenants)).toEqual({ echo: ["created Domain echo.example", "missing Domain echo.example"] });
    expect(await client.getDomain(echo, "echo.example")).toBeDefined();
  }, 600_000);

  it("is healed by up after refresh took the drift into the state", async () => {
    const charlie = await organizationIdNamed(client, "Tenant charlie");
    await client.deleteDomain(charlie, "charlie.example");
    const refresh = await runFleet("refresh", options());
    expect(outline(refresh.tenants)).toEqual({ charlie: ["missing Domain charlie.example"] });
    const up = await runFleet("up", options());
    expect(up.results.filter((result) => result.status === "done").map((result) => result.shard)).toEqual([
      `${fleet}-002`,
    ]);
    expect(await client.getDomain(charlie, "charlie.example")).toBeDefined();
  }, 600_000);
});

function invocation(report: FleetReport) {
  return { command: report.command, json: false, detailedExitcode: false, failOnUnmanaged: false, options: options() };
}
