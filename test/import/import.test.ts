import { readFileSync } from "node:fs";
import { join } from "node:path";
import { LocalWorkspace } from "@pulumi/pulumi/automation";
import { type Inventory, loadInventory } from "pulumi-dmarc-partner";
import type { DmarcClient } from "pulumi-dmarc-partner/client";
import { exitCodeOf, type ImportCommandOptions, runFleet, runImport } from "pulumi-dmarc-partner/fleet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FleetInvocation } from "../../provider/src/fleet/cli/arguments";
import { inventoryTenantPlan } from "../../provider/src/inventory/declare";
import { dropFleetStacks, fleetOptions, inventoryOf, serviceClient, uniqueFleetName } from "../fleet/support";
import { stats } from "../reliability/harness";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { useEngine } from "../support/engine";
import { plannedOf, registeredOf, type StateResource } from "../support/tenantPlan";
import { type SeededIds, seedAccount, seedOrganization, variedAccount } from "./seed";

// Bringing an existing account under management: an account made through
// the API alone, imported into an inventory, deployed by the fleet runner.
// The service must see reads only, every object must be adopted under its
// own id, and the next preview must plan nothing.

const account = variedAccount(64);
const fleet = uniqueFleetName("import");
const SHARD_SIZE = 40;

let emulator: EmulatorHandle;
let client: DmarcClient;
let seeded: SeededIds[];
let inventoryPath: string;

function importOptions(extra: Partial<ImportCommandOptions> = {}): ImportCommandOptions {
  const { inventory: _none, ...options } = fleetOptions(emulator, fleet, inventoryOf([]), { shardSize: SHARD_SIZE });
  return { ...options, inventoryPath, ...extra };
}

function runOptions(inventory: Inventory) {
  return fleetOptions(emulator, fleet, inventory, { shardSize: SHARD_SIZE });
}

/** Requests by route since `before`, without the token requests. */
async function requestsSince(before: Record<string, number>): Promise<Record<string, number>> {
  const after = (await stats(emulator)).byRoute;
  return Object.fromEntries(
    Object.entries(after)
      .map(([route, count]): [string, number] => [route, count - (before[route] ?? 0)])
      .filter(([route, count]) => count > 0 && route !== "POST /auth/token"),
  );
}

const writes = (byRoute: Record<string, number>) => Object.keys(byRoute).filter((route) => !route.startsWith("GET "));

const seededFor = (name: string) => {
  const index = account.findIndex((organization) => organization.name === name);
  return seeded[index] as SeededIds;
};

beforeAll(async () => {
  await useEngine();
  emulator = await startTestEmulator();
  client = serviceClient(emulator);
  seeded = await seedAccount(client, account, emulator.partner.id, {
    expireSubscription: async (subscriptionId) => {
      await emulator.control("POST", `/subscriptions/${subscriptionId}/expire`);
    },
  });
  const { stateDir } = fleetOptions(emulator, fleet, inventoryOf([]));
  inventoryPath = join(stateDir, "tenants.yaml");
}, 120_000);

afterAll(async () => {
  await dropFleetStacks(runOptions(inventoryOf([])), fleet);
  await emulator?.emulator.close();
}, 300_000);

describe("dmarc-fleet import", () => {
  it("writes every organisation it can adopt, with reads only, and says what it leaves out", async () => {
    const before = (await stats(emulator)).byRoute;
    const report = await runImport(importOptions({ check: true }));
    const requests = await requestsSince(before);
    expect(writes(requests)).toEqual([]);

    const organizations = account.length;
    // Four lists per organisation (none has over 100 domains): groups, domains, owned webhooks, subscriptions.
    expect(requests["GET /v1/domain-groups"]).toBe(organizations);
    expect(requests["GET /v1/domains"]).toBe(organizations);
    expect(requests["GET /v1/partners/subscriptions"]).toBe(organizations);
    // The organisations' own, and the partner's.
    expect(requests["GET /v1/webhooks/owner/:ownerId"]).toBe(organizations + 1);
    expect(report.organizations).toBe(organizations);
    expect(report.checked).toBe(true);
    expect(report.failedChecks).toBe(0);

    const inventory = loadInventory(inventoryPath);
    const byOrganization = new Map(inventory.tenants.map((tenant) => [tenant.ids?.organization, tenant]));
    account.forEach((spec, index) => {
      const ids = seeded[index] as SeededIds;
      const tenant = byOrganization.get(ids.organization);
      if (spec.expected === "entry") {
        expect(tenant, spec.name).toBeDefined();
        expect(tenant?.ids?.subscription).toBe(ids.subscription);
        expect(Object.values(ids.groups)).toContain(tenant?.ids?.group);
        for (const [domain, id] of Object.entries(tenant?.ids?.domains ?? {})) expect(ids.domains[domain]).toBe(id);
        for (const [name, id] of Object.entries(tenant?.ids?.webhooks ?? {})) expect(ids.webhooks[name]).toBe(id);
      } else {
        expect(tenant, spec.name).toBeUndefined();
        const leftOut = report.leftOut.find((entry) => entry.organizationId === ids.organization);
        expect(leftOut?.reason, spec.name).toMatch(spec.expected);
      }
    });

    const text = readFileSync(inventoryPath, "utf8");
    const keyOf = (name: string) => byOrganization.get(seededFor(name).organization)?.key;
    // Names that give one key: the older organisation keeps it, the other is told apart by its id, and says why.
    expect(keyOf("Acme Corp")).toBe("acme-corp");
    expect(keyOf("ACME corp.")).toBe(`acme-corp-${seededFor("ACME corp.").organization.slice(-6)}`);
    expect(text).toContain(`# key "${keyOf("ACME corp.")}": "acme-corp" is taken by organisation "Acme Corp"`);
    expect(keyOf("株式会社")).toBe(seededFor("株式会社").organization.replace("_", "-"));
    // What an entry does not hold is said above it, one line each.
    expect(text).toContain("# left out: invited users, because the service has no call that lists");
    // Every state an organisation can be in moves in: further groups, a cancelled subscription kept so, none.
    const spread = byOrganization.get(seededFor("Spread Ltd").organization);
    // The group holding most domains is the tenant's group; the others are its groups, an empty one too.
    expect([spread?.group, spread?.groups]).toEqual(["Europe", ["Main", "Spare"]]);
    expect(spread?.ids?.groups).toEqual({
      Main: seededFor("Spread Ltd").groups.Main,
      Spare: seededFor("Spread Ltd").groups.Spare,
    });
    expect(spread?.domains.map((domain) => [domain.name, domain.group])).toEqual([
      ["old.spread.example.eu", undefined],
      ["spread.example", "Main"],
      ["spread.example.eu", undefined],
    ]);
    expect(spread?.subscription).toBe("suspended");
    expect(byOrganization.get(seededFor("Former 06").organization)?.subscription).toBe("suspended");
    const prospect = byOrganization.get(seededFor("Prospect 07").organization);
    expect([prospect?.subscription, prospect?.plan, prospect?.ids?.subscription]).toEqual([
      "none",
      undefined,
      undefined,
    ]);
    // A lapsed customer moves in without its expired subscription: nothing is renewed unasked.
    const lapsed = byOrganization.get(seededFor("Lapsed Ltd").organization);
    expect([lapsed?.subscription, lapsed?.plan, lapsed?.domains.map((domain) => domain.name)]).toEqual([
      "none",
      undefined,
      ["lapsed.example"],
    ]);
    expect(text).toMatch(
      /# left out: subscription \S+, because it expired on \d{4}-\d\d-\d\d: the entry says subscription: none/,
    );
    expect(text).not.toContain("# left out: domain group");
    expect(text).toMatch(/# left out: webhook "audit" \(wh_\w+\), because it is inactive/);
    expect(text).toContain('# left out: domain shared.example, because tenant "twin-one" lists it');
    expect(text).toMatch(
      /# left out: webhook "events " \(wh_\w+\), because name must not start or end with white space; got "events "/,
    );
    expect(text).toContain("# secret: the service shows it only when it makes the webhook; rotate it to get one");
    expect(text).toMatch(/# left out: webhook "partner events" \(wh_\w+\) that the partner owns/);
    expect(byOrganization.get(seededFor("Twin Two").organization)?.domains.map((domain) => domain.name)).toEqual([
      "twin-two.example",
    ]);
  });

  it("is adopted by dmarc-fleet up with no write request, under the original ids, and previews with no change", async () => {
    const inventory = loadInventory(inventoryPath);
    const before = (await stats(emulator)).byRoute;
    const up = await runFleet("up", runOptions(inventory));
    expect(up.results.filter((result) => result.status === "failed")).toEqual([]);
    expect(writes(await requestsSince(before))).toEqual([]);

    const expectedIds = inventory.tenants.flatMap((tenant) => {
      const ids = tenant.ids ?? {};
      return [
        ids.organization,
        ids.group,
        ...Object.values(ids.groups ?? {}),
        ...(ids.subscription ? [ids.subscription] : []),
        ...Object.values(ids.domains ?? {}),
        ...Object.values(ids.webhooks ?? {}),
      ];
    });
    const { projectDir, projectName, env } = runOptions(inventory);
    const workspace = await LocalWorkspace.create({
      workDir: projectDir,
      envVars: env,
      projectSettings: { name: projectName, runtime: "nodejs" },
    });
    const stateIds: string[] = [];
    const registered: StateResource[] = [];
    for (const shard of up.shards) {
      const exported = await workspace.exportStack(shard.name);
      const resources = (exported.deployment as { resources?: StateResource[] }).resources ?? [];
      registered.push(...resources);
      for (const resource of resources) {
        if (resource.type.startsWith("pulumi-nodejs:dynamic/dmarc:") && resource.id) stateIds.push(resource.id);
      }
    }
    expect(stateIds.sort()).toEqual((expectedIds as string[]).sort());
    // What each Tenant registered is its plan, object for object: the list import --check judged.
    const plans = await client.listPlans();
    for (const tenant of inventory.tenants) {
      // The provider's check fills in the inputs' defaults, so the registered inputs hold the planned ones and those.
      expect(registeredOf(tenant.key, registered), tenant.key).toMatchObject(
        plannedOf(inventoryTenantPlan(inventory, tenant), registered, plans),
      );
    }

    // Every shard's plan, not only the due ones: the adoption's proof is that each plans nothing.
    const preview = await runFleet("preview", { ...runOptions(inventory), all: true });
    for (const result of preview.results) expect(Object.keys(result.changes)).toEqual(["same"]);
    expect(exitCodeOf(preview, { detailedExitcode: true, failOnUnmanaged: false } as FleetInvocation)).toBe(0);
  }, 900_000);

  // Two imports of the whole account: minutes on a busy machine.
  it("adds nothing when run again with --append, and only a new organisation once there is one", async () => {
    const text = readFileSync(inventoryPath, "utf8");
    const again = await runImport(importOptions({ append: true }));
    expect(again.changed).toBe(false);
    expect(again.written).toEqual([]);
    expect(readFileSync(inventoryPath, "utf8")).toBe(text);

    const newcomer = await seedOrganization(
      client,
      {
        name: "Newcomer Ltd",
        groups: [{ name: "Main", domains: [{ name: "newcomer.example" }] }],
        subscription: { plan: "Starter" },
        expected: "entry",
      },
      await client.listPlans(),
    );
    const added = await runImport(importOptions({ append: true }));
    expect(added.written.map((tenant) => tenant.organizationId)).toEqual([newcomer.organization]);
    const grown = readFileSync(inventoryPath, "utf8");
    // The partner's file is kept byte for byte: the new entry goes in after the last tenant.
    const cut = text.indexOf("\n# left out: organisation");
    expect(grown.slice(0, cut)).toBe(text.slice(0, cut));
    expect(loadInventory(inventoryPath).tenants.map((tenant) => tenant.ids?.organization)).toContain(
      newcomer.organization,
    );
  }, 300_000);
});
