import * as dmarc from "pulumi-dmarc-partner";
import { runFleet } from "pulumi-dmarc-partner/fleet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { createTestStack, useEngine } from "../support/engine";
import { dropFleetStacks, fleetOptions, inventoryOf, serviceClient, tenant, uniqueFleetName } from "./support";

// Moving in: tenants deployed by one stack of this package are taken over by
// a fleet through their ids, then the old stack lets go of them. Nothing on
// the service is recreated: every id stays.

let emulator: EmulatorHandle;
const fleet = uniqueFleetName("movein");

const tenants = [
  tenant("kilo", {
    admins: ["it@kilo.example"],
    webhooks: [{ name: "events", url: "https://hooks.kilo.example/dmarc", events: ["domain.verified"] }],
  }),
  tenant("lima", { domains: [{ name: "lima.example" }, { name: "mail.lima.example", type: "parked" }] }),
  tenant("mike"),
];

beforeAll(async () => {
  await useEngine();
  emulator = await startTestEmulator();
});

afterAll(async () => {
  await dropFleetStacks(fleetOptions(emulator, fleet, inventoryOf([])), fleet);
  await emulator?.emulator.close();
});

/** Every object on the service by what it is, with its id. */
async function serviceObjects(): Promise<string[]> {
  const client = serviceClient(emulator);
  const objects: string[] = [];
  for (const organization of await client.listOrganizations()) {
    objects.push(`organization ${organization.name} ${organization.id}`);
    for (const domain of await client.listDomains(organization.id))
      objects.push(`domain ${domain.domain} ${organization.id}`);
    for (const webhook of await client.listWebhooks(organization.id))
      objects.push(`webhook ${webhook.name} ${webhook.objectId}`);
    for (const subscription of await client.listSubscriptions(organization.id)) {
      objects.push(`subscription ${organization.id} ${subscription.id} ${subscription.cancelledAt ?? "active"}`);
    }
  }
  return objects.sort();
}

describe("moving tenants from a single stack into a fleet", () => {
  it("adopts every object by id, and the old stack lets go without deleting anything", async () => {
    const inventory = inventoryOf(tenants);
    const single = await createTestStack({
      projectName: "dmarc-fleet-movein",
      config: emulator.stackConfig,
      program: async () => {
        const declared = dmarc.declareTenants(inventory);
        return { ids: Object.fromEntries(declared.map((entry) => [entry.key, entry.ids])) };
      },
    });
    const up = await single.up();
    expect(up.summary.result).toBe("succeeded");
    const ids = up.outputs.ids?.value as Record<string, dmarc.TenantIds>;
    const before = await serviceObjects();

    const movedIn = inventoryOf(tenants.map((entry) => ({ ...entry, ids: ids[entry.key as string] })));
    const report = await runFleet("up", fleetOptions(emulator, fleet, movedIn));
    expect(report.ok).toBe(true);
    expect(await serviceObjects()).toEqual(before);

    // The old stack forgets its resources: removed with --force, no destroy, so no delete reaches the service.
    await single.workspace.removeStack(single.name, { force: true });
    expect(await serviceObjects()).toEqual(before);

    // Every shard's plan, not only the due ones: the move's proof is that each plans nothing.
    const preview = await runFleet("preview", fleetOptions(emulator, fleet, movedIn, { all: true }));
    for (const result of preview.results) expect(Object.keys(result.changes)).toEqual(["same"]);
  }, 600_000);
});
