import {
  DomainGroup,
  MagicLink,
  Organization,
  PlanList,
  Subscription,
  Webhook,
  WebhookWithSecret,
} from "pulumi-dmarc-partner/api";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { control, expectRefusal, startTestEmulator, type TestEmulator } from "./helpers";

let t: TestEmulator;
let starterMonthly: string;
let businessMonthly: string;

beforeAll(async () => {
  t = await startTestEmulator({ magicLinkTtlSeconds: 1 });
  const plans = await t.alpha.call("GET", "/v1/partners/plans", { schema: PlanList });
  starterMonthly = plans.body[0]?.prices[0]?.id ?? "";
  businessMonthly = plans.body[1]?.prices[0]?.id ?? "";
});

afterAll(() => t.close());

beforeEach(async () => {
  await control(t.emulator, "POST", "/reset");
});

async function organization(name = "Org") {
  return (await t.alpha.call("POST", "/v1/organizations", { body: { name }, schema: Organization })).body.id;
}

async function group(organizationId: string) {
  return (await t.alpha.call("POST", "/v1/domain-groups", { body: { organizationId, name: "G" }, schema: DomainGroup }))
    .body.id;
}

async function addDomain(organizationId: string, groupId: string, domain: string) {
  return t.alpha.call("POST", "/v1/domains", { body: { organizationId, domain, type: "sending", groupId } });
}

async function assign(organizationId: string, priceId: string) {
  return (
    await t.alpha.call("POST", "/v1/partners/subscriptions/assign", {
      body: { organizationId, priceId },
      schema: Subscription,
    })
  ).body;
}

describe("authentication", () => {
  it("refuses a missing, unknown or expired token with 401", async () => {
    expectRefusal(await t.alpha.call("GET", "/v1/organizations", { token: null }), 401, "AuthenticationError");
    expectRefusal(await t.alpha.call("GET", "/v1/organizations", { token: "nope" }), 401, "AuthenticationError");
    const partner = t.emulator.partners[0];
    const issued = await fetch(`${t.emulator.url}/auth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `grant_type=client_credentials&client_id=${partner?.clientId}&client_secret=${partner?.clientSecret}`,
    });
    const { access_token } = (await issued.json()) as { access_token: string };
    expect((await t.alpha.call("GET", "/v1/organizations", { token: access_token })).status).toBe(200);
    expect((await control(t.emulator, "POST", "/tokens/expire")).status).toBe(204);
    const expired = await t.alpha.call("GET", "/v1/organizations", { token: access_token });
    expectRefusal(expired, 401, "AuthenticationError");
    expect(expired.headers.get("www-authenticate")).toMatch(/^Bearer/);
    // Static partner tokens stay valid.
    expect((await t.alpha.call("GET", "/v1/organizations")).status).toBe(200);
  });

  it("refuses wrong client credentials with 401 and a wrong grant type with 400", async () => {
    const post = (body: string) =>
      t.alpha.call("POST", "/auth/token", {
        token: null,
        raw: { contentType: "application/x-www-form-urlencoded", text: body },
      });
    const partner = t.emulator.partners[0];
    expectRefusal(
      await post(`grant_type=client_credentials&client_id=${partner?.clientId}&client_secret=wrong`),
      401,
      "AuthenticationError",
    );
    expectRefusal(await post(`grant_type=password&client_id=x&client_secret=y`), 400, "ValidationError", {
      fields: ["grant_type"],
    });
  });

  it("answers another partner's objects with 404, never 403", async () => {
    const organizationId = await organization();
    expectRefusal(await t.beta.call("GET", `/v1/organizations/${organizationId}`), 404, "ResourceNotFound", {
      details: { resourceId: organizationId, resourceType: "Organization" },
    });
    expectRefusal(
      await t.beta.call("POST", "/v1/domain-groups", { body: { organizationId, name: "x" } }),
      404,
      "ResourceNotFound",
    );
    const list = await t.beta.call("GET", "/v1/organizations");
    expect((list.body as { data: unknown[] }).data).toEqual([]);
  });
});

describe("request format", () => {
  it("answers unknown routes, malformed JSON and wrong content types with the error envelope", async () => {
    expectRefusal(await t.alpha.call("GET", "/v1/nothing-here"), 404, "ResourceNotFound", {
      details: { resourceType: "Route", resourceId: "GET /v1/nothing-here" },
    });
    expectRefusal(
      await t.alpha.call("POST", "/v1/organizations", { raw: { contentType: "application/json", text: "{oops" } }),
      400,
      "ValidationError",
      { fields: ["body"] },
    );
    expectRefusal(
      await t.alpha.call("POST", "/v1/organizations", { raw: { contentType: "text/plain", text: "name=x" } }),
      415,
      "ValidationError",
      { fields: ["content-type"] },
    );
    expectRefusal(
      await t.alpha.call("POST", "/v1/organizations", {
        raw: { contentType: "application/x-www-form-urlencoded", text: "name=x" },
      }),
      415,
      "ValidationError",
      { fields: ["content-type"] },
    );
    expectRefusal(
      await t.alpha.call("POST", "/auth/token", {
        token: null,
        body: { grant_type: "client_credentials", client_id: "a", client_secret: "b" },
      }),
      415,
      "ValidationError",
      { fields: ["content-type"] },
    );
  });
});

describe("organisations", () => {
  it("refuses names outside 1..128 characters", async () => {
    for (const name of ["", "x".repeat(129)]) {
      expectRefusal(await t.alpha.call("POST", "/v1/organizations", { body: { name } }), 400, "ValidationError", {
        fields: ["name"],
      });
    }
    expect((await t.alpha.call("POST", "/v1/organizations", { body: { name: "x".repeat(128) } })).status).toBe(201);
  });

  it("renames with PATCH", async () => {
    const id = await organization("Before");
    const renamed = await t.alpha.call("PATCH", `/v1/organizations/${id}`, {
      body: { name: "After" },
      schema: Organization,
    });
    expect(renamed.body.name).toBe("After");
  });

  it("refuses to delete an organisation while a subscription is active (409)", async () => {
    const id = await organization();
    const subscription = await assign(id, starterMonthly);
    expectRefusal(await t.alpha.call("DELETE", `/v1/organizations/${id}`), 409, "ResourceConflict", {
      details: { conflictReason: "active_subscription", resourceId: id, resourceType: "Organization" },
    });
    await t.alpha.call("POST", `/v1/partners/subscriptions/${subscription.id}/cancel`);
    expect((await t.alpha.call("DELETE", `/v1/organizations/${id}`)).status).toBe(204);
  });
});

describe("domain groups", () => {
  it("refuses to delete a group that still holds domains (409)", async () => {
    const organizationId = await organization();
    const groupId = await group(organizationId);
    await addDomain(organizationId, groupId, "held.example");
    expectRefusal(
      await t.alpha.call("DELETE", `/v1/domain-groups/${groupId}`, { query: { organizationId } }),
      409,
      "ResourceConflict",
      { details: { conflictReason: "group_not_empty" } },
    );
    await t.alpha.call("DELETE", "/v1/domains/held.example", { query: { organizationId } });
    expect((await t.alpha.call("DELETE", `/v1/domain-groups/${groupId}`, { query: { organizationId } })).status).toBe(
      204,
    );
  });

  it("requires organizationId on reads", async () => {
    const organizationId = await organization();
    const groupId = await group(organizationId);
    expectRefusal(await t.alpha.call("GET", `/v1/domain-groups/${groupId}`), 400, "ValidationError", {
      fields: ["organizationId"],
    });
  });
});

describe("domains", () => {
  it("refuses invalid names, unknown types, several domains a call and duplicates", async () => {
    const organizationId = await organization();
    const groupId = await group(organizationId);
    for (const domain of ["Upper.Example", "no-tld", "trailing.example.", "a..example", "-x.example"]) {
      expectRefusal(await addDomain(organizationId, groupId, domain), 400, "ValidationError", { fields: ["domain"] });
    }
    expectRefusal(
      await t.alpha.call("POST", "/v1/domains", {
        body: { organizationId, domain: ["a.example", "b.example"], type: "sending", groupId },
      }),
      400,
      "ValidationError",
      { fields: ["domain"] },
    );
    expectRefusal(
      await t.alpha.call("POST", "/v1/domains", {
        body: { organizationId, domain: "typed.example", type: "receiving", groupId },
      }),
      400,
      "ValidationError",
      { fields: ["type"] },
    );
    expect((await addDomain(organizationId, groupId, "dup.example")).status).toBe(201);
    expectRefusal(await addDomain(organizationId, groupId, "dup.example"), 409, "ResourceConflict", {
      details: { conflictReason: "already_exists", resourceId: "dup.example", resourceType: "Domain" },
    });
  });

  it("refuses a group of another organisation and a setup type other than TXT or CNAME", async () => {
    const organizationId = await organization("A");
    const otherGroup = await group(await organization("B"));
    expectRefusal(await addDomain(organizationId, otherGroup, "x.example"), 404, "ResourceNotFound", {
      details: { resourceType: "DomainGroup" },
    });
    const groupId = await group(organizationId);
    await addDomain(organizationId, groupId, "x.example");
    expectRefusal(
      await t.alpha.call("GET", "/v1/domains/x.example/setup", { query: { organizationId, type: "MX" } }),
      400,
      "ValidationError",
      { fields: ["type"] },
    );
    const cname = await t.alpha.call("GET", "/v1/domains/x.example/setup", {
      query: { organizationId, type: "CNAME" },
    });
    expect(cname.body).toMatchObject({ host: "_dmarc.x.example", type: "cname" });
  });

  it("enforces plan limits: the smallest plan before any subscription, the plan's domainCount after", async () => {
    const organizationId = await organization();
    const groupId = await group(organizationId);
    for (let index = 0; index < 5; index += 1) {
      expect((await addDomain(organizationId, groupId, `d${index}.example`)).status).toBe(201);
    }
    expectRefusal(await addDomain(organizationId, groupId, "d5.example"), 422, "ValidationError", {
      fields: ["domain"],
      details: { reason: "plan_limit", limit: 5 },
    });
    const subscription = await assign(organizationId, businessMonthly);
    expect((await addDomain(organizationId, groupId, "d5.example")).status).toBe(201);
    // Six domains do not fit the Starter plan.
    expectRefusal(
      await t.alpha.call("POST", `/v1/partners/subscriptions/${subscription.id}`, {
        body: { priceId: starterMonthly },
      }),
      422,
      "ValidationError",
      { fields: ["priceId"], details: { reason: "downgrade_below_usage" } },
    );
    await t.alpha.call("POST", `/v1/partners/subscriptions/${subscription.id}/cancel`);
    expectRefusal(await addDomain(organizationId, groupId, "d6.example"), 422, "ValidationError", {
      fields: ["organizationId"],
      details: { reason: "subscription_suspended" },
    });
  });
});

describe("webhooks", () => {
  it("refuses plain http except on loopback, unknown events and unknown owners", async () => {
    const ownerId = t.emulator.partners[0]?.id ?? "";
    const base = { name: "w", ownerId, events: ["domain.created"] };
    expectRefusal(
      await t.alpha.call("POST", "/v1/webhooks", { body: { ...base, url: "http://hooks.example/x" } }),
      400,
      "ValidationError",
      { fields: ["url"] },
    );
    expectRefusal(
      await t.alpha.call("POST", "/v1/webhooks", {
        body: { ...base, url: "https://hooks.example/x", events: ["domain.deleted"] },
      }),
      400,
      "ValidationError",
      { fields: ["events.0"] },
    );
    expectRefusal(
      await t.alpha.call("POST", "/v1/webhooks", {
        body: { ...base, ownerId: "someone", url: "https://hooks.example" },
      }),
      400,
      "ValidationError",
      { fields: ["ownerId"] },
    );
    const loopback = await t.alpha.call("POST", "/v1/webhooks", { body: { ...base, url: "http://127.0.0.1:9/x" } });
    expect(loopback.status).toBe(201);
  });

  it("returns the secret on create and regenerate only, and allows at most 5 per owner", async () => {
    const ownerId = t.emulator.partners[0]?.id ?? "";
    const body = { name: "w", ownerId, url: "https://hooks.example/x", events: ["domain.created"] };
    const created = await t.alpha.call("POST", "/v1/webhooks", { body, schema: WebhookWithSecret });
    const read = await t.alpha.call("GET", `/v1/webhooks/${created.body.objectId}`, { schema: Webhook });
    expect(read.body).not.toHaveProperty("secret");
    const updated = await t.alpha.call("PUT", `/v1/webhooks/${created.body.objectId}`, {
      body: { active: false },
      schema: Webhook,
    });
    expect(updated.body).not.toHaveProperty("secret");
    expect(updated.body.active).toBe(false);
    const regenerated = await t.alpha.call("POST", `/v1/webhooks/${created.body.objectId}/regenerate-secret`, {
      schema: WebhookWithSecret,
    });
    expect(regenerated.body.secret).not.toBe(created.body.secret);
    for (let index = 1; index < 5; index += 1) {
      expect((await t.alpha.call("POST", "/v1/webhooks", { body })).status).toBe(201);
    }
    expectRefusal(await t.alpha.call("POST", "/v1/webhooks", { body }), 422, "ValidationError", {
      fields: ["ownerId"],
      details: { reason: "webhook_limit", limit: 5 },
    });
    // The limit is per owner: an organisation may still have its own.
    const organizationId = await organization();
    expect((await t.alpha.call("POST", "/v1/webhooks", { body: { ...body, ownerId: organizationId } })).status).toBe(
      201,
    );
  });
});

describe("subscriptions", () => {
  it("refuses another partner's price with 404 and renewing or cancelling a cancelled subscription with 422", async () => {
    const organizationId = await organization();
    const betaPlans = await t.beta.call("GET", "/v1/partners/plans", { schema: PlanList });
    const betaPrice = betaPlans.body[0]?.prices[0]?.id ?? "";
    expectRefusal(
      await t.alpha.call("POST", "/v1/partners/subscriptions/assign", { body: { organizationId, priceId: betaPrice } }),
      404,
      "ResourceNotFound",
      { details: { resourceType: "Price", resourceId: betaPrice } },
    );
    const subscription = await assign(organizationId, starterMonthly);
    expectRefusal(
      await t.alpha.call("POST", `/v1/partners/subscriptions/${subscription.id}`, { body: { priceId: betaPrice } }),
      404,
      "ResourceNotFound",
    );
    expect((await t.alpha.call("POST", `/v1/partners/subscriptions/${subscription.id}/cancel`)).status).toBe(200);
    for (const action of ["renew", "cancel"]) {
      expectRefusal(
        await t.alpha.call("POST", `/v1/partners/subscriptions/${subscription.id}/${action}`),
        422,
        "ValidationError",
        { fields: ["subscriptionId"], details: { reason: "subscription_cancelled" } },
      );
    }
    expectRefusal(
      await t.alpha.call("POST", `/v1/partners/subscriptions/${subscription.id}`, {
        body: { priceId: businessMonthly },
      }),
      422,
      "ValidationError",
    );
    // Re-activation is by a new assignment.
    expect((await assign(organizationId, businessMonthly)).cancelledAt).toBeNull();
  });
});

describe("users and magic links", () => {
  async function invite(organizationId: string, role: string) {
    return t.alpha.call("POST", "/v1/users/invite", {
      body: { organizationId, permissions: { users: [{ email: "u@x.example" }], organization: { role } } },
    });
  }

  it("refuses unknown roles and answers a revoked user with 404", async () => {
    const organizationId = await organization();
    expectRefusal(await invite(organizationId, "owner"), 400, "ValidationError", {
      fields: ["permissions.organization.role"],
    });
    expect((await invite(organizationId, "no_access")).status).toBe(200);
    const revoke = { organizationId, userIds: ["u@x.example"] };
    expect((await t.alpha.call("POST", "/v1/users/revoke-organization-access", { body: revoke })).status).toBe(200);
    expectRefusal(
      await t.alpha.call("GET", "/v1/users/u@x.example", { query: { organizationId } }),
      404,
      "ResourceNotFound",
      { details: { resourceType: "User" } },
    );
    // Repeating a revoke changes nothing; the spelling with one more segment is accepted too.
    const again = await t.alpha.call("POST", "/v1/users/revoke-organization-access/x", { body: revoke });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ organizationId, userIds: [] });
    expectRefusal(
      await t.alpha.call("POST", "/auth/magic-link", {
        body: { userId: "u@x.example", organizationId, redirectUri: "https://d.example" },
      }),
      404,
      "ResourceNotFound",
    );
  });

  it("makes magic links single use and expiring (410 afterwards)", async () => {
    const organizationId = await organization();
    await invite(organizationId, "admin");
    const issue = async () =>
      (
        await t.alpha.call("POST", "/auth/magic-link", {
          body: { userId: "u@x.example", organizationId, redirectUri: "https://d.example/home" },
          schema: MagicLink,
        })
      ).body.url;
    const once = await issue();
    expect((await fetch(once, { redirect: "manual" })).status).toBe(302);
    const reused = await t.alpha.call("GET", once, { token: null });
    expectRefusal(reused, 410, "ResourceNotFound");
    const late = await issue();
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expectRefusal(await t.alpha.call("GET", late, { token: null }), 410, "ResourceNotFound");
    expectRefusal(
      await t.alpha.call("GET", `${t.emulator.url}/auth/magic/unknown`, { token: null }),
      404,
      "ResourceNotFound",
    );
  });
});
