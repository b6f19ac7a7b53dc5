import type { DmarcClient } from "pulumi-dmarc-partner/client";
import { type FleetOptions, type FleetReport, runFleet, type TenantFindings } from "pulumi-dmarc-partner/fleet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { useEngine } from "../support/engine";
import {
  dropFleetStacks,
  findingsOutline,
  fleetOptions,
  inventoryOf,
  organizationIdNamed,
  requestsDuring,
  serviceClient,
  tenant,
  uniqueFleetName,
} from "./support";

// `drift --audit-log` on two shards of two tenants: a shard is refreshed only
// when the service's audit log shows a change to one of its organisations
// since its last clean drift; what the log does not file (an organisation's
// name) is left to a plain drift.

let emulator: EmulatorHandle;
let client: DmarcClient;
const fleet = uniqueFleetName("audited");
const keys = ["alpha", "bravo", "charlie", "delta"];

// The emulator shares this machine's clock: no lag to allow for.
function options(extra: Partial<FleetOptions> = {}): FleetOptions {
  return fleetOptions(emulator, fleet, inventoryOf(keys.map((key) => tenant(key))), {
    shardSize: 2,
    auditLog: true,
    auditLogMarginSeconds: 0,
    ...extra,
  });
}

function statuses(report: FleetReport): Record<string, string> {
  return Object.fromEntries(report.results.map((result) => [result.shard, result.status]));
}

function outline(tenants: readonly TenantFindings[]): Record<string, string[]> {
  return findingsOutline(tenants, ["differs", "missing"]);
}

beforeAll(async () => {
  await useEngine();
  emulator = await startTestEmulator();
  client = serviceClient(emulator);
  const up = await runFleet("up", options());
  expect(up.results.map((result) => result.status)).toEqual(["done", "done"]);
}, 600_000);

afterAll(async () => {
  await dropFleetStacks(fleetOptions(emulator, fleet, inventoryOf([])), fleet);
  await emulator?.emulator.close();
});

describe("drift --audit-log", () => {
  it("refreshes shards never checked, then skips them while the log shows no change, for one request per organisation", async () => {
    const first = await requestsDuring(emulator, () => runFleet("drift", options()));
    expect(statuses(first.report)).toEqual({ [`${fleet}-001`]: "done", [`${fleet}-002`]: "done" });
    const second = await requestsDuring(emulator, () => runFleet("drift", options()));
    expect(statuses(second.report)).toEqual({ [`${fleet}-001`]: "skipped", [`${fleet}-002`]: "skipped" });
    expect(second.report.results.map((result) => result.reason)).toEqual([
      expect.stringMatching(/audit log shows no change to its 2 organisations since/),
      expect.stringMatching(/audit log shows no change to its 2 organisations since/),
    ]);
    // Four audit-log reads, the account's page of organisations and the runner's tokens.
    expect(second.requests).toBeLessThanOrEqual(keys.length + 3);
    expect(second.requests).toBeLessThan(first.requests);
  }, 600_000);

  it("refreshes the shard whose organisation the log shows changed, and only that one", async () => {
    await client.deleteDomain(await organizationIdNamed(client, "Tenant charlie"), "charlie.example");
    const drift = await runFleet("drift", options());
    expect(statuses(drift)).toEqual({ [`${fleet}-001`]: "skipped", [`${fleet}-002`]: "done" });
    expect(outline(drift.tenants)).toEqual({ charlie: ["missing Domain charlie.example"] });
    const again = await runFleet("drift", options());
    expect(statuses(again)).toEqual({ [`${fleet}-001`]: "skipped", [`${fleet}-002`]: "done" });
  }, 600_000);

  it("leaves to a plain drift what the log does not file, such as an organisation's name", async () => {
    await client.updateOrganization(await organizationIdNamed(client, "Tenant alpha"), { name: "Renamed by hand" });
    const audited = await runFleet("drift", options());
    expect(statuses(audited)[`${fleet}-001`]).toBe("skipped");
    const plain = await runFleet("drift", options({ auditLog: false }));
    expect(outline(plain.tenants)).toMatchObject({
      alpha: ["differs Organization alpha name: Tenant alpha -> Renamed by hand"],
    });
  }, 600_000);
});
