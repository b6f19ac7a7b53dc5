import { parseInventory } from "pulumi-dmarc-partner";
import type { DmarcClient } from "pulumi-dmarc-partner/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import {
  adoptionDeclarations,
  adoptionHost,
  type Declaration,
  declarationProblems,
} from "../../provider/src/discovery/adoption";
import { inventoryTenantPlan } from "../../provider/src/inventory/declare";
import type { DynamicProviderHost } from "../../provider/src/runtime/host";
import { serviceClient } from "../fleet/support";
import { stats } from "../reliability/harness";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";

// `import --check`: each declaration of a tenant entry goes through the
// provider host's own check, adoption and diff, against the emulator, with
// no engine. What would not adopt cleanly is said in the host's words, and
// nothing is written to the service on the way.

let emulator: EmulatorHandle;
let client: DmarcClient;
let host: DynamicProviderHost;
let organizationId: string;
let groupId: string;
let active: string;
let cancelled: string;

beforeAll(async () => {
  emulator = await startTestEmulator();
  client = serviceClient(emulator);
  const organization = await client.createOrganization({ name: "Checked Ltd" });
  organizationId = organization.id;
  groupId = (await client.createDomainGroup({ organizationId, name: "Main" })).id;
  await client.createDomain({ organizationId, domain: "checked.example", type: "parked", groupId });
  const [plan] = await client.listPlans();
  const price = plan?.prices.find((candidate) => candidate.frequency === "m");
  if (!plan || !price) throw new Error("the emulator's catalogue has no monthly price");
  cancelled = (await client.assignSubscription({ organizationId, priceId: price.id })).id;
  await client.cancelSubscription(cancelled);
  active = (await client.assignSubscription({ organizationId, priceId: price.id })).id;
  const settings = Object.fromEntries(
    Object.entries(emulator.stackConfig).map(([key, entry]) => [key.replace("dmarc:", ""), entry.value]),
  );
  host = await adoptionHost(settings);
});

afterAll(async () => {
  await emulator?.emulator.close();
});

/** The declarations of an entry for the seeded organisation, with `change` applied to the entry. */
async function declarations(change: (entry: Record<string, unknown>) => void): Promise<Declaration[]> {
  const entry: Record<string, unknown> = {
    name: "Checked Ltd",
    key: "checked",
    group: "Main",
    plan: "Starter",
    currency: "USD",
    domains: [{ name: "checked.example", type: "parked" }],
    ids: {
      organization: organizationId,
      group: `${organizationId}/${groupId}`,
      subscription: `${organizationId}/${active}`,
      domains: { "checked.example": `${organizationId}/checked.example` },
    },
  };
  change(entry);
  const inventory = parseInventory(stringify({ tenants: [entry] }));
  const plan = inventoryTenantPlan(inventory, inventory.tenants[0] as (typeof inventory.tenants)[number]);
  return adoptionDeclarations(plan, await client.listPlans(), "t");
}

async function problemsByWhat(list: readonly Declaration[]): Promise<Record<string, string[]>> {
  const entries = await Promise.all(
    list.map(async (declaration) => [declaration.what, await declarationProblems(host, declaration, true)] as const),
  );
  return Object.fromEntries(entries.filter(([, problems]) => problems.length > 0));
}

describe("the adoption check", () => {
  it("passes an entry that matches the service, and reports each declaration that does not", async () => {
    const before = await stats(emulator);
    expect(await problemsByWhat(await declarations(() => undefined))).toEqual({});

    const mismatched = await problemsByWhat(
      await declarations((entry) => {
        entry.group = "Production";
        entry.domains = [{ name: "checked.example" }];
        (entry.ids as Record<string, unknown>).subscription = `${organizationId}/${cancelled}`;
      }),
    );
    expect(Object.keys(mismatched).sort()).toEqual([
      `domain checked.example`,
      `domain group ${organizationId}/${groupId}`,
      `subscription ${organizationId}/${cancelled}`,
    ]);
    expect(mismatched["domain checked.example"]?.[0]).toContain(
      'differs from its declaration (type: declared "sending", actual "parked")',
    );
    expect(mismatched[`domain group ${organizationId}/${groupId}`]?.[0]).toContain(
      'name: declared "Production", actual "Main"',
    );
    // A cancelled subscription adopts, but the next preview would assign a new one.
    expect(mismatched[`subscription ${organizationId}/${cancelled}`]).toEqual([
      "it adopts, but the next preview would change it (status drifted)",
    ]);

    const unknown = await problemsByWhat(
      await declarations((entry) => {
        entry.domains = [{ name: "checked.example", type: "parked" }, { name: "new.example" }];
      }),
    );
    expect(unknown).toEqual({ "domain new.example": ["it has no id, so up would create it"] });

    const after = await stats(emulator);
    const writes = Object.keys(after.byRoute).filter(
      (route) =>
        !route.startsWith("GET ") && route !== "POST /auth/token" && after.byRoute[route] !== before.byRoute[route],
    );
    expect(writes).toEqual([]);
  });
});
