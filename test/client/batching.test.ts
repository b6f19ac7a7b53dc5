import { type RunningEmulator, startEmulator } from "dmarc-partner-emulator";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type ClientOptions, closeClients, createClient, type DmarcApiError } from "../../provider/src/client";

// Domain creates of one organisation that arrive together go out as one
// POST /v1/domains/batch; a batch the service refuses is sent again one
// domain per call, so each caller gets its own answer.

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
