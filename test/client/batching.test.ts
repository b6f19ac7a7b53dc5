import { type RunningEmulator, startEmulator } from "dmarc-partner-emulator";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type ClientOptions, closeClients, createClient, type DmarcApiError } from "../../provider/src/client";

// Domain creates of one organisation that arrive together go out as one
// POST /v1/domains/batch; a batch the service refuses is sent again one
// domain per call, so each caller gets its own answer. Creates declared
// together (a Tenant's domains) wait for each other by count, not by time.

let emulator: RunningEmulator;

async function control<T = unknown>(method: string, path: string): Promise<T> {
  const response = await fetch(`${emulator.url}/_emulator${path}`, { method });
  const text = await response.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

const byRoute = async () => (await control<{ byRoute: Record<string, number> }>("GET", "/stats")).byRoute;

function client(options: Partial<ClientOptions> = {}) {
  const partner = emulator.partners[0];
  if (!partner) throw new Error("the emulator has no partner");
  return createClient({
    baseUrl: emulator.url,
    clientId: partner.clientId,
    clientSecret: partner.clientSecret,
    ...options,
  });
}

async function organizationWithGroup(options: Partial<ClientOptions> = {}) {
  const dmarc = client(options);
  const { id: organizationId } = await dmarc.createOrganization({ name: "Batch Ltd" });
  const { id: groupId } = await dmarc.createDomainGroup({ organizationId, name: "Main" });
  return { dmarc, organizationId, groupId };
}

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
});
afterAll(() => emulator.close());
afterEach(async () => {
  await closeClients();
  await control("POST", "/reset");
});

describe("domain creates sent together", () => {
  it("sends three creates that arrive together as one batch, each caller getting its own domain", async () => {
    const { dmarc, organizationId, groupId } = await organizationWithGroup();
    const names = ["a.batch.example", "b.batch.example", "c.batch.example"];
    const created = await Promise.all(
      names.map((domain) => dmarc.createDomain({ organizationId, domain, type: "sending", groupId })),
    );
    expect(created.map((domain) => domain.domain)).toEqual(names);
    const routes = await byRoute();
    expect(routes["POST /v1/domains/batch"]).toBe(1);
    expect(routes["POST /v1/domains"] ?? 0).toBe(0);
    expect((await dmarc.listDomains(organizationId)).map((domain) => domain.domain).sort()).toEqual(names);
  });

  it("sends a refused batch again one by one: the domain that exists is refused, the others are created", async () => {
    const { dmarc, organizationId, groupId } = await organizationWithGroup();
    await dmarc.createDomain({ organizationId, domain: "taken.batch.example", type: "sending", groupId });
    const outcomes = await Promise.allSettled(
      ["taken.batch.example", "new.batch.example"].map((domain) =>
        dmarc.createDomain({ organizationId, domain, type: "sending", groupId }),
      ),
    );
    expect(outcomes[0]?.status).toBe("rejected");
    expect(((outcomes[0] as PromiseRejectedResult).reason as DmarcApiError).status).toBe(409);
    expect(outcomes[1]).toMatchObject({ status: "fulfilled", value: { domain: "new.batch.example" } });
    const routes = await byRoute();
    expect(routes["POST /v1/domains/batch"]).toBe(1);
    expect(routes["POST /v1/domains"]).toBe(3);
  });

  it("sends each create alone with domainBatchWindowMs 0", async () => {
    const { dmarc, organizationId, groupId } = await organizationWithGroup({ domainBatchWindowMs: 0 });
    await Promise.all(
      ["x.batch.example", "y.batch.example"].map((domain) =>
        dmarc.createDomain({ organizationId, domain, type: "parked", groupId }),
      ),
    );
    const routes = await byRoute();
    expect(routes["POST /v1/domains/batch"] ?? 0).toBe(0);
    expect(routes["POST /v1/domains"]).toBe(2);
  });
});

describe("domain creates declared together", () => {
  const create = (
    dmarc: ReturnType<typeof client>,
    organizationId: string,
    groupId: string,
    domain: string,
    together: number,
  ) => dmarc.createDomain({ organizationId, domain, type: "sending", groupId }, together);

  it("sends them as one batch however far apart they arrive, once the last one comes", async () => {
    const { dmarc, organizationId, groupId } = await organizationWithGroup();
    const first = create(dmarc, organizationId, groupId, "one.together.example", 3);
    // Requests in between take far longer than the gathering window, as a busy engine does.
    for (let read = 0; read < 3; read++) await dmarc.listDomains(organizationId);
    const second = create(dmarc, organizationId, groupId, "two.together.example", 3);
    await dmarc.listOrganizations();
    expect((await byRoute())["POST /v1/domains/batch"] ?? 0).toBe(0);
    const third = create(dmarc, organizationId, groupId, "three.together.example", 3);
    const created = await Promise.all([first, second, third]);
    expect(created.map((domain) => domain.domain)).toEqual([
      "one.together.example",
      "two.together.example",
      "three.together.example",
    ]);
    const routes = await byRoute();
    expect(routes["POST /v1/domains/batch"]).toBe(1);
    expect(routes["POST /v1/domains"] ?? 0).toBe(0);
  });

  it("batches the new ones when the others are declared as existing, before or after the first create", async () => {
    const { dmarc, organizationId, groupId } = await organizationWithGroup();
    await create(dmarc, organizationId, groupId, "kept.together.example", 1);
    dmarc.domainDeclared(organizationId, "kept.together.example", false);
    const first = create(dmarc, organizationId, groupId, "new1.together.example", 4);
    dmarc.domainDeclared(organizationId, "new2.together.example", true);
    await dmarc.listDomains(organizationId);
    const second = create(dmarc, organizationId, groupId, "new2.together.example", 4);
    await dmarc.listDomains(organizationId);
    expect((await byRoute())["POST /v1/domains/batch"] ?? 0).toBe(0);
    dmarc.domainDeclared(organizationId, "adopted.together.example", false);
    await Promise.all([first, second]);
    const routes = await byRoute();
    expect(routes["POST /v1/domains/batch"]).toBe(1);
    // The kept domain's own create, made alone before the others were declared.
    expect(routes["POST /v1/domains"]).toBe(1);
  });

  it("sends a lone domain at once, alone", async () => {
    const { dmarc, organizationId, groupId } = await organizationWithGroup();
    await create(dmarc, organizationId, groupId, "alone.together.example", 1);
    const routes = await byRoute();
    expect(routes["POST /v1/domains"]).toBe(1);
    expect(routes["POST /v1/domains/batch"] ?? 0).toBe(0);
  });

  it("sends a refused batch again one by one, each caller getting its own answer", async () => {
    const { dmarc, organizationId, groupId } = await organizationWithGroup();
    await create(dmarc, organizationId, groupId, "taken.together.example", 1);
    const outcomes = await Promise.allSettled([
      create(dmarc, organizationId, groupId, "taken.together.example", 2),
      create(dmarc, organizationId, groupId, "fresh.together.example", 2),
    ]);
    expect(outcomes[0]?.status).toBe("rejected");
    expect(((outcomes[0] as PromiseRejectedResult).reason as DmarcApiError).status).toBe(409);
    expect(outcomes[1]).toMatchObject({ status: "fulfilled", value: { domain: "fresh.together.example" } });
    expect((await byRoute())["POST /v1/domains/batch"]).toBe(1);
  });
});
