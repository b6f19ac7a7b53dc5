import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Stack } from "@pulumi/pulumi/automation";
import * as dmarc from "pulumi-dmarc-partner";
import type { DmarcClient } from "pulumi-dmarc-partner/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adoptionDeclarations, adoptionHost, declarationProblems } from "../../provider/src/discovery/adoption";
import { inventoryTenantPlan } from "../../provider/src/inventory/declare";
import { inventoryOf, serviceClient } from "../fleet/support";
import { stats } from "../reliability/harness";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { createTestStack, useEngine } from "../support/engine";
import { plannedOf, registeredOf, stateResources } from "../support/tenantPlan";

// Every state an inventory entry can declare, deployed by a real engine: a
// suspended subscription kept cancelled, an organisation without one, domains
// spread over several groups with parked domains, webhooks and admins. What
// each Tenant registers is its plan, the preview after the up plans nothing,
// and renewing or cancelling a subscription is one change of the entry.

let emulator: EmulatorHandle;
let client: DmarcClient;
let stack: Stack;
let entries: Record<string, unknown>[];
/** Declared once the adopted tenants are in: a tenant the up creates. */
let spreadEntry: Record<string, unknown>;
let paused: { organization: string; subscription: string };
let bare: string;
let backendFolder: string | undefined;

/** An organisation made by raw API calls: one group, one domain, and a subscription cancelled, or none. */
async function seeded(
  name: string,
  domain: string,
  subscription: "cancelled" | "none",
): Promise<{ organization: string; group: string; domains: Record<string, string>; subscription?: string }> {
  const organization = (await client.createOrganization({ name })).id;
  const group = (await client.createDomainGroup({ organizationId: organization, name: "Main" })).id;
  await client.createDomain({ organizationId: organization, domain, type: "sending", groupId: group });
  const ids = {
    organization,
    group: `${organization}/${group}`,
    domains: { [domain]: `${organization}/${domain}` },
  };
  if (subscription === "none") return ids;
  const [plan] = (await client.listPlans()).filter((candidate) => candidate.name === "Starter");
  const price = plan?.prices.find((candidate) => candidate.frequency === "m");
  if (!price) throw new Error("the emulator's catalogue has no monthly Starter price");
  const assigned = await client.assignSubscription({ organizationId: organization, priceId: price.id });
  await client.cancelSubscription(assigned.id);
  return { ...ids, subscription: `${organization}/${assigned.id}` };
}

/** The organisation's subscriptions as `<id> active|cancelled`, straight from the service. */
async function subscriptionsOf(organizationId: string): Promise<string[]> {
  const subscriptions = await client.listSubscriptions(organizationId);
  return subscriptions.map((subscription) => `${subscription.id} ${subscription.cancelledAt ? "cancelled" : "active"}`);
}

/** What import --check says against each adopted tenant's entry as it stands: its problems, by tenant key. */
async function checkVerdicts(): Promise<Record<string, string[]>> {
  const settings = Object.fromEntries(
    Object.entries(emulator.stackConfig).map(([key, entry]) => [key.replace("dmarc:", ""), entry.value]),
  );
  const host = await adoptionHost(settings);
  const inventory = inventoryOf(entries);
  const plans = await client.listPlans();
  const adopted = inventory.tenants.filter((tenant) => tenant.ids !== undefined);
  const verdicts = await Promise.all(
    adopted.map(async (tenant) => {
      const declarations = adoptionDeclarations(inventoryTenantPlan(inventory, tenant), plans, tenant.label);
      const problems = await Promise.all(
        declarations.map((declaration) => declarationProblems(host, declaration, true)),
      );
      return [tenant.key, problems.flat()] as const;
    }),
  );
  return Object.fromEntries(verdicts);
}

function setSubscription(key: string, state: "active" | "suspended"): void {
  entries = entries.map((entry) => (entry.key === key ? { ...entry, subscription: state } : entry));
}

beforeAll(async () => {
  await useEngine();
  emulator = await startTestEmulator();
  client = serviceClient(emulator);
  const pausedIds = await seeded("Paused Co", "paused.example", "cancelled");
  const bareIds = await seeded("Bare Co", "bare.example", "none");
  paused = { organization: pausedIds.organization, subscription: pausedIds.subscription ?? "" };
  bare = bareIds.organization;
  entries = [
    {
      name: "Paused Co",
      key: "paused",
      group: "Main",
      plan: "Starter",
      subscription: "suspended",
      domains: [{ name: "paused.example" }],
      onDelete: "keep",
      ids: pausedIds,
    },
    // The plan is ignored: an organisation without a subscription keeps none.
    {
      name: "Bare Co",
      key: "bare",
      group: "Main",
      plan: "Starter",
      subscription: "none",
      domains: [{ name: "bare.example" }],
      onDelete: "keep",
      ids: bareIds,
    },
  ];
  spreadEntry = {
    name: "Spread Co",
    key: "spread",
    group: "Main",
    groups: ["Europe", "Spare"],
    plan: "Business",
    domains: [
      { name: "spread.example" },
      { name: "spread.example.eu", group: "Europe" },
      { name: "old.spread.example.eu", type: "parked", group: "Europe" },
    ],
    admins: ["it@spread.example"],
    webhooks: [{ name: "events", url: "https://hooks.spread.example/dmarc", events: ["domain.verified"] }],
  };
  backendFolder = mkdtempSync(join(tmpdir(), "dmarc-tenant-states-"));
  stack = await createTestStack({
    projectName: "dmarc-tenant-states",
    backendUrl: `file://${backendFolder}`,
    config: emulator.stackConfig,
    program: async () => {
      dmarc.declareTenants(inventoryOf(entries));
      return {};
    },
  });
}, 120_000);

afterAll(async () => {
  await stack?.destroy();
  await emulator?.emulator.close();
  if (backendFolder) rmSync(backendFolder, { recursive: true, force: true });
}, 300_000);

describe("every state of an organisation, as the inventory declares it", () => {
  it("adopts the suspended and the bare organisation with no write, creates the spread one, each as its plan says, and previews no change", async () => {
    // import --check approves both entries as they stand, and the up that follows writes nothing.
    expect(await checkVerdicts()).toEqual({ paused: [], bare: [] });
    const before = (await stats(emulator)).byRoute;
    expect((await stack.up()).summary.result).toBe("succeeded");
    const after = (await stats(emulator)).byRoute;
    const written = Object.keys(after).filter(
      (route) => !route.startsWith("GET ") && route !== "POST /auth/token" && after[route] !== before[route],
    );
    expect(written).toEqual([]);

    entries = [...entries, spreadEntry];
    expect((await stack.up()).summary.result).toBe("succeeded");
    // The plan's references are told apart by class: the plan here is made by the modules the comparison reads.
    const resources = stateResources([(await stack.exportStack()).deployment]);
    const inventory = inventoryOf(entries);
    const plans = await client.listPlans();
    for (const tenant of inventory.tenants) {
      // The provider's check fills in the inputs' defaults, so the registered inputs hold the planned ones and those.
      expect(registeredOf(tenant.key, resources), tenant.key).toMatchObject(
        plannedOf(inventoryTenantPlan(inventory, tenant), resources, plans),
      );
    }
    expect(await subscriptionsOf(paused.organization)).toEqual([`${paused.subscription.split("/")[1]} cancelled`]);
    expect(await subscriptionsOf(bare)).toEqual([]);

    const spread = (await client.listOrganizations()).find((organization) => organization.name === "Spread Co");
    const groups = new Map(
      (await client.listDomainGroups(spread?.id ?? "")).map((group) => [group.id, group.name] as const),
    );
    expect([...groups.values()].sort()).toEqual(["Europe", "Main", "Spare"]);
    const domains = await client.listDomains(spread?.id ?? "");
    expect(domains.map((domain) => [domain.domain, groups.get(domain.domainGroupId ?? "")]).sort()).toEqual([
      ["old.spread.example.eu", "Europe"],
      ["spread.example", "Main"],
      ["spread.example.eu", "Europe"],
    ]);

    const preview = await stack.preview();
    expect(Object.keys(preview.changeSummary)).toEqual(["same"]);
  }, 600_000);

  it("renews a suspended subscription when the entry says active, and cancels it when it says suspended again", async () => {
    setSubscription("paused", "active");
    // import --check's verdict on the changed entry is the preview's: the subscription would change.
    expect(await checkVerdicts()).toEqual({
      paused: ["it adopts, but the next preview would change it (status drifted)"],
      bare: [],
    });
    expect((await stack.preview()).changeSummary.update).toBe(1);
    expect((await stack.up()).summary.result).toBe("succeeded");
    const renewed = await subscriptionsOf(paused.organization);
    expect(renewed.filter((line) => line.endsWith(" active"))).toHaveLength(1);

    setSubscription("paused", "suspended");
    expect((await stack.up()).summary.result).toBe("succeeded");
    const cancelled = await subscriptionsOf(paused.organization);
    expect(cancelled.filter((line) => line.endsWith(" active"))).toEqual([]);
    expect(Object.keys((await stack.preview()).changeSummary)).toEqual(["same"]);
  }, 600_000);
});
