import * as dmarc from "pulumi-dmarc-partner";
import { dynamicProviderHost as host } from "pulumi-dmarc-partner";
import { closeClients, createClient } from "pulumi-dmarc-partner/client";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { createTestStack } from "../support/engine";

// Reads answered from list calls, in the provider process: one list request
// per organisation or owner answers concurrent reads, a write of the same
// process makes the lists it touches stale, and an object missing from its
// list is confirmed gone by its own GET. Each test starts with fresh clients,
// as each engine operation starts a fresh provider process.

type Props = Record<string, unknown>;

let handle: EmulatorHandle;

interface Stats {
  requests: number;
  byRoute: Record<string, number>;
}

/** Requests per route sent while `action` ran. */
async function requestsDuring(action: () => Promise<unknown>): Promise<Record<string, number>> {
  const before = await handle.control<Stats>("GET", "/stats");
  await action();
  const after = await handle.control<Stats>("GET", "/stats");
  return Object.fromEntries(
    Object.entries(after.byRoute)
      .map(([route, count]): [string, number] => [route, count - (before.byRoute[route] ?? 0)])
      .filter(([, count]) => count > 0),
  );
}

async function created(typeName: string, news: Props): Promise<{ id: string; outs: Props }> {
  const checked = await host.check(typeName, {}, news);
  expect(checked.failures ?? []).toEqual([]);
  const result = await host.create(typeName, checked.inputs as Props);
  return { id: result.id, outs: result.outs as Props };
}

async function read(typeName: string, resource: { id: string; outs: Props }): Promise<Props | undefined> {
  return (await host.read(typeName, resource.id, resource.outs)).props as Props | undefined;
}

/** An organisation with a group, three domains in it, a webhook of the organisation and a subscription. */
async function tenant() {
  const org = await created("Organization", { name: "Reads Ltd" });
  const organizationId = org.id;
  const group = await created("DomainGroup", { organizationId, name: "before" });
  const groupId = group.id.split("/")[1];
  const domains = [];
  for (const name of ["a.reads.example", "b.reads.example", "c.reads.example"]) {
    domains.push(await created("Domain", { organizationId, domain: name, groupId }));
  }
  const hook = await created("Webhook", {
    name: "reads events",
    url: "http://127.0.0.1:9/reads",
    events: ["domain.verified"],
    ownerId: organizationId,
  });
  const plans = await createClient(clientOptions()).listPlans();
  const priceId = plans.find((plan) => plan.name === "Starter")?.prices[0]?.id;
  const plan = await created("Subscription", { organizationId, priceId });
  return { org, group, domains, hook, plan };
}

function clientOptions() {
  return {
    baseUrl: handle.emulator.url,
    clientId: handle.partner.clientId,
    clientSecret: handle.partner.clientSecret,
  };
}

beforeAll(async () => {
  handle = await startTestEmulator();
});

afterAll(async () => {
  await closeClients();
  await handle?.emulator.close();
});

beforeEach(async () => {
  await handle.control("POST", "/reset");
  await closeClients();
  await host.configure({
    config: {
      get: (key: string) =>
        ({
          "dmarc:baseUrl": handle.emulator.url,
          "dmarc:clientId": handle.partner.clientId,
          "dmarc:clientSecret": handle.partner.clientSecret,
          "dmarc:partnerId": handle.partner.id,
        })[key],
      require: () => {
        throw new Error("not used");
      },
    },
  });
});

describe("reads from list calls", () => {
  it("answers a tenant's concurrent reads with one request per list", async () => {
    const { org, group, domains, hook, plan } = await tenant();
    const empty = await created("DomainGroup", { organizationId: org.id, name: "empty" });
    let results: (Props | undefined)[] = [];
    const requests = await requestsDuring(async () => {
      results = await Promise.all([
        read("Organization", org),
        read("DomainGroup", group),
        read("DomainGroup", empty),
        ...domains.map((domain) => read("Domain", domain)),
        read("Webhook", hook),
        read("Subscription", plan),
      ]);
    });
    // The domains name their group: only the group without domains needs the list of groups.
    expect(requests).toEqual({
      "GET /v1/organizations": 1,
      "GET /v1/domain-groups": 1,
      "GET /v1/domains": 1,
      "GET /v1/webhooks/owner/:ownerId": 1,
      "GET /v1/partners/subscriptions": 1,
    });
    expect(results.map((props) => props?.name ?? props?.domain ?? props?.status)).toEqual([
      "Reads Ltd",
      "before",
      "empty",
      "a.reads.example",
      "b.reads.example",
      "c.reads.example",
      "reads events",
      "active",
    ]);
    expect(results[1]?.domains).toEqual(["a.reads.example", "b.reads.example", "c.reads.example"]);
    expect(results[2]?.domains).toEqual([]);
  });

  it("sees a write this process made since the list was read, in every list the write touches", async () => {
    const { group, domains } = await tenant();
    const [domain] = domains;
    if (!domain) throw new Error("no domain");
    expect(await read("DomainGroup", group)).toMatchObject({ name: "before" });
    expect(await read("Domain", domain)).toMatchObject({ domainGroup: "before" });

    const renamed = await host.update("DomainGroup", group.id, group.outs, {
      organizationId: group.outs.organizationId,
      name: "after",
    });
    expect(renamed.outs).toMatchObject({ name: "after" });

    // Both lists were read before the rename: a kept list would still say "before".
    const requests = await requestsDuring(async () => {
      expect(await read("DomainGroup", group)).toMatchObject({ name: "after" });
      expect(await read("Domain", domain)).toMatchObject({ domainGroup: "after" });
    });
    expect(requests).toEqual({ "GET /v1/domains": 1 });

    // Without a write in between, the lists read since answer again.
    const again = await requestsDuring(() => read("Domain", domain));
    expect(again).toEqual({});
  });

  it("sees a webhook and a subscription changed by id, whose owner it learnt from its lists", async () => {
    const { hook, plan } = await tenant();
    expect(await read("Webhook", hook)).toMatchObject({ active: true });
    expect(await read("Subscription", plan)).toMatchObject({ priceId: plan.outs.priceId });
    const deactivated = await host.update("Webhook", hook.id, hook.outs, { ...hook.outs, active: false });
    const plans = await createClient(clientOptions()).listPlans();
    const business = plans.find((candidate) => candidate.name === "Business")?.prices[0]?.id;
    const moved = await host.update("Subscription", plan.id, plan.outs, {
      organizationId: plan.outs.organizationId,
      priceId: business,
    });
    expect(moved.outs?.subscriptionId).not.toBe(plan.outs.subscriptionId);

    expect(await read("Webhook", { id: hook.id, outs: deactivated.outs as Props })).toMatchObject({ active: false });
    expect(await read("Subscription", { id: plan.id, outs: moved.outs as Props })).toMatchObject({
      priceId: business,
      subscriptionId: moved.outs?.subscriptionId,
      status: "active",
    });
  });

  it("confirms with the object's own GET that an object missing from its list is gone", async () => {
    const { domains } = await tenant();
    const [kept, removed] = domains;
    if (!kept || !removed) throw new Error("no domains");
    // Another process (its own client) deletes a domain; this one has read nothing yet.
    const other = createClient({ ...clientOptions(), maxAttempts: 2 });
    expect(other).not.toBe(createClient(clientOptions()));
    expect(await other.deleteDomain(removed.outs.organizationId as string, removed.outs.domain as string)).toBe(true);

    let results: HostRead[] = [];
    const requests = await requestsDuring(async () => {
      results = await Promise.all([
        host.read("Domain", kept.id, kept.outs),
        host.read("Domain", removed.id, removed.outs),
      ]);
    });
    expect(results[0]?.id).toBe(kept.id);
    expect(results[1]).toEqual({});
    expect(requests).toEqual({ "GET /v1/domains": 1, "GET /v1/domains/:domain": 1 });
  });
});

type HostRead = Awaited<ReturnType<typeof host.read>>;

describe("lists read by a listing", () => {
  it("answer the reads that follow on the same client, until the client forgets them", async () => {
    const { org, hook } = await tenant();
    const client = createClient({ ...clientOptions(), maxAttempts: 2 });
    const listing = await requestsDuring(() =>
      Promise.all([client.readDomainGroups(org.id), client.readWebhooks(org.id)]),
    );
    expect(listing).toEqual({ "GET /v1/domain-groups": 1, "GET /v1/webhooks/owner/:ownerId": 1 });
    const reads = await requestsDuring(async () => {
      expect(await client.readWebhook(hook.id, org.id)).toMatchObject({ name: "reads events" });
      expect(await client.readDomainGroups(org.id)).toHaveLength(1);
    });
    expect(reads).toEqual({});
    client.forgetLists();
    const afresh = await requestsDuring(() => client.readWebhook(hook.id, org.id));
    expect(afresh).toEqual({ "GET /v1/webhooks/owner/:ownerId": 1 });
  });
});

describe("organisation reads of a large partner", () => {
  it("take one page of the partner's organisations, and a GET for one not on it", async () => {
    const client = createClient(clientOptions());
    const others = [];
    for (let index = 0; index < 100; index++) others.push(await client.createOrganization({ name: `Other ${index}` }));
    const late = await created("Organization", { name: "Late Ltd" });
    const early = { id: others[0]?.id as string, outs: { name: "Other 0", onDelete: "delete" } };
    await closeClients();
    let results: (Props | undefined)[] = [];
    const requests = await requestsDuring(async () => {
      results = await Promise.all([read("Organization", early), read("Organization", late)]);
    });
    // The 101st organisation is not on the first page of 100; the rest of the list is never fetched.
    expect(requests).toEqual({ "GET /v1/organizations": 1, "GET /v1/organizations/:organizationId": 1 });
    expect(results.map((props) => props?.name)).toEqual(["Other 0", "Late Ltd"]);
  });
});

describe("a refresh through the engine", () => {
  it("reads two whole tenants in 3 requests each, plus 3 shared by the run", async () => {
    const stack = await createTestStack({
      projectName: "reads-refresh",
      config: handle.stackConfig,
      program: async () => {
        const priceId = dmarc.getPriceId({ plan: "Starter", frequency: "monthly" });
        for (const key of ["r1", "r2"]) {
          const org = new dmarc.Organization(`${key}-org`, { name: `Refresh ${key}` });
          const { organizationId } = org;
          const group = new dmarc.DomainGroup(`${key}-group`, { organizationId, name: "main" });
          // Owned by the partner (dmarc:partnerId), as webhooks are by default: one list for every tenant.
          new dmarc.Webhook(`${key}-hook`, {
            name: `${key} events`,
            url: `http://127.0.0.1:9/${key}`,
            events: ["domain.verified"],
          });
          for (const index of [1, 2, 3]) {
            new dmarc.Domain(`${key}-d${index}`, {
              organizationId,
              domain: `d${index}.${key}.example`,
              groupId: group.groupId,
            });
          }
          new dmarc.Subscription(`${key}-plan`, { organizationId, priceId });
          new dmarc.Invitation(`${key}-admin`, { organizationId, email: `admin@${key}.example` });
        }
        return {};
      },
    });
    try {
      const up = await stack.up();
      expect(up.summary.resourceChanges).toEqual({ create: 17 });
      let changes: Record<string, number> | undefined;
      const requests = await requestsDuring(async () => {
        changes = (await stack.refresh()).summary.resourceChanges;
      });
      expect(changes).toEqual({ same: 17 });
      expect(requests).toEqual({
        // The provider process's token, the partner's organisations, the partner's webhooks.
        "POST /auth/token": 1,
        "GET /v1/organizations": 1,
        "GET /v1/webhooks/owner/:ownerId": 1,
        // Per tenant: the domains (which name their group too), the subscriptions, and the
        // invited user (no list route answers users: GET /v1/users/{userId} is the only read).
        "GET /v1/domains": 2,
        "GET /v1/partners/subscriptions": 2,
        "GET /v1/users/:userId": 2,
      });
    } finally {
      await stack.destroy();
      await stack.workspace.removeStack(stack.name);
    }
  }, 300_000);
});
