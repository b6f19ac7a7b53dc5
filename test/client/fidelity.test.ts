import { type ProfileName, type RunningEmulator, startEmulator } from "dmarc-partner-emulator";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { verificationOutcome, WebhookEvent } from "../../provider/src/api";
import { type ClientOptions, closeClients, createClient, DmarcApiError } from "../../provider/src/client";
import { json, type Loopback, startLoopback } from "./loopback";

// The client against the service as each of its self-descriptions shows it:
// the emulator in its "published" profile (the OpenAPI description) and its
// "guides" profile, and a loopback server for shapes either may send that the
// emulator does not (lists without meta, `link` for `url`, "month").

async function failure(pending: Promise<unknown>): Promise<Error> {
  try {
    await pending;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected the call to fail");
}

describe.each(["published", "guides"] as ProfileName[])("against the emulator's %s profile", (profile) => {
  let emulator: RunningEmulator;

  const partner = () => {
    const first = emulator.partners[0];
    if (!first) throw new Error("the emulator has no partner");
    return first;
  };
  const client = (options: Partial<ClientOptions> = {}) =>
    createClient({
      baseUrl: emulator.url,
      clientId: partner().clientId,
      clientSecret: partner().clientSecret,
      retryBaseDelayMs: 5,
      ...options,
    });

  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, retryScale: 0.001, profile });
  });
  afterAll(() => emulator.close());
  afterEach(() => closeClients());

  it("lists no webhooks for an owner without any (row 1), and learns a new webhook's secret (create without it)", async () => {
    const dmarc = client();
    const { id } = await dmarc.createOrganization({ name: "Hooks Ltd" });
    expect(await dmarc.listWebhooks(id)).toEqual([]);
    const created = await dmarc.createWebhook({
      name: "h",
      ownerId: id,
      url: "http://127.0.0.1:9/h",
      events: ["domain.verified"],
    });
    expect(created.secret).toMatch(/^whsec_/);
    expect((await dmarc.listWebhooks(id)).map((webhook) => webhook.objectId)).toEqual([created.objectId]);
  });

  it("keeps the service's reason and trace id from either error body (row 3)", async () => {
    const error = await failure(client().createOrganization({ name: "" }));
    expect(error).toBeInstanceOf(DmarcApiError);
    const refusal = error as DmarcApiError;
    expect(refusal.status).toBe(400);
    expect(refusal.traceId).toMatch(/^trace_/);
    expect(refusal.serviceMessage).not.toBe("");
    expect(refusal.invalidFields.map((field) => field.field)).toEqual(["name"]);
  });

  it("reads every page of a list whatever its meta carries (row 4)", async () => {
    const dmarc = client();
    const { id } = await dmarc.createOrganization({ name: "Many Groups" });
    const names = Array.from({ length: 103 }, (_, index) => `g${index}`);
    for (const name of names) await dmarc.createDomainGroup({ organizationId: id, name });
    expect((await dmarc.listDomainGroups(id)).map((group) => group.name).sort()).toEqual([...names].sort());
  });

  it("reads plans and subscriptions in the profile's spelling (row 5)", async () => {
    const dmarc = client();
    const { id } = await dmarc.createOrganization({ name: "Plans Ltd" });
    const [plan] = await dmarc.listPlans();
    const price = plan?.prices[0];
    if (!price) throw new Error("the demo catalogue has prices");
    const assigned = await dmarc.assignSubscription({ organizationId: id, priceId: price.id });
    expect(assigned.cancelledAt).toBeNull();
    const [listed] = await dmarc.listSubscriptions(id);
    expect(listed?.cancelledAt).toBeNull();
    const cancelled = await dmarc.cancelSubscription(assigned.id);
    expect(cancelled.cancelledAt).not.toBeNull();
  });

  it("tells bad credentials apart with the credentials' advice (row 6)", async () => {
    const error = await failure(client({ clientSecret: "wrong-secret" }).listPlans());
    expect(error).toBeInstanceOf(DmarcApiError);
    expect((error as DmarcApiError).status).toBe(profile === "published" ? 400 : 401);
    expect(error.message).toContain("Check clientId and clientSecret");
    expect(error.message).not.toContain("wrong-secret");
  });

  it("finds a deleted organisation's children gone, whether the service answers 403 or 404 (row 9)", async () => {
    const dmarc = client();
    const { id } = await dmarc.createOrganization({ name: "Gone Ltd" });
    const group = await dmarc.createDomainGroup({ organizationId: id, name: "Main" });
    await dmarc.createDomain({ organizationId: id, domain: "gone.example", type: "sending", groupId: group.id });
    await dmarc.deleteOrganization(id);
    expect(await dmarc.getDomain(id, "gone.example")).toBeUndefined();
    expect(await dmarc.getDomainGroup(id, group.id)).toBeUndefined();
    expect(await dmarc.deleteDomain(id, "gone.example")).toBe(false);
  });

  it("still refuses, rather than calling it gone, an organisation that exists", async () => {
    const dmarc = client();
    const { id } = await dmarc.createOrganization({ name: "Here Ltd" });
    const [plan] = await dmarc.listPlans();
    const price = plan?.prices[0];
    if (!price) throw new Error("the demo catalogue has prices");
    await dmarc.assignSubscription({ organizationId: id, priceId: price.id });
    const error = await failure(dmarc.assignSubscription({ organizationId: id, priceId: price.id }));
    expect((error as DmarcApiError).status).toBe(409);
  });
});

describe("shapes the emulator does not send", () => {
  let server: Loopback;
  let answer: (path: string) => unknown;

  beforeAll(async () => {
    server = await startLoopback((request, response) => {
      if (request.path.startsWith("/auth/token")) {
        return json(response, 200, {
          access_token: "t",
          expires_in: 300,
          refresh_expires_in: 0,
          token_type: "Bearer",
          "not-before-policy": 0,
          scope: "public-api",
        });
      }
      const body = answer(request.path);
      if (body === undefined) {
        response.writeHead(404);
        return response.end();
      }
      json(response, 200, body);
    });
  });
  afterAll(() => server.close());
  afterEach(() => closeClients());

  const client = () => createClient({ baseUrl: server.url, clientId: "c", clientSecret: "s", retryBaseDelayMs: 1 });
  const group = (index: number) => ({ id: `dmngrp_${index}`, name: `g${index}` });

  it("pages on without meta until a page comes back short", async () => {
    answer = (path) => {
      const page = Number(new URL(path, server.url).searchParams.get("page"));
      const count = page === 1 ? 100 : page === 2 ? 30 : 0;
      return { data: Array.from({ length: count }, (_, index) => group((page - 1) * 100 + index)) };
    };
    expect(await client().listDomainGroups("org_1")).toHaveLength(130);
  });

  it("pages on by total when the service pages smaller than asked", async () => {
    answer = (path) => {
      const page = Number(new URL(path, server.url).searchParams.get("page"));
      return {
        data: Array.from({ length: page <= 2 ? 10 : 5 }, (_, index) => group(page * 10 + index)),
        meta: { total: 25, page },
      };
    };
    expect(await client().listDomainGroups("org_1")).toHaveLength(25);
  });

  it("reads a 404 with no body as gone, and `month` as the monthly code", async () => {
    answer = (path) =>
      path.startsWith("/v1/partners/plans")
        ? [
            {
              id: "plan_a",
              name: "A",
              features: {},
              prices: [
                {
                  id: "p",
                  name: "A monthly",
                  amount: 1,
                  currency: "USD",
                  frequency: "month",
                  minimumBillableItems: null,
                  billingCycles: null,
                  billingPeriod: 1,
                  createdAt: "2025-01-01T00:00:00Z",
                  updatedAt: "2025-01-01T00:00:00Z",
                },
              ],
              createdAt: "2025-01-01T00:00:00Z",
              updatedAt: "2025-01-01T00:00:00Z",
            },
          ]
        : undefined;
    const dmarc = client();
    expect((await dmarc.listPlans())[0]?.prices[0]?.frequency).toBe("m");
    expect(await dmarc.getUser("org_1", "3f0c2f1e-5b8a-4c1d-9e2f-0a1b2c3d4e5f")).toBeUndefined();
  });

  it("reads a magic link sent as `link`", async () => {
    answer = () => ({ link: "https://console.example/ml/abc", expiringAt: "2025-10-16T12:34:56Z" });
    expect((await client().createMagicLink({ userId: "u", organizationId: "org_1" })).url).toBe(
      "https://console.example/ml/abc",
    );
  });
});

describe("domain.verified statuses (row 2)", () => {
  const event = (verificationStatus: string) => ({
    data: { domain: "acme.example", verificationStatus },
    metadata: { eventName: "domain.verified", ownerId: "org_1" },
  });

  it("accepts the description's, the guides' and an unknown word, and tells what each means", () => {
    for (const status of ["verified", "success", "failed", "pending-review"]) {
      expect(WebhookEvent.safeParse(event(status)).success).toBe(true);
    }
    expect(["verified", "success", "failed", "pending-review"].map(verificationOutcome)).toEqual([
      "verified",
      "verified",
      "failed",
      "unknown",
    ]);
  });
});
