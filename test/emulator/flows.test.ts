import {
  DomainCreatedEvent,
  DomainGroup,
  Domain as DomainSchema,
  DomainVerifiedEvent,
  InviteUserResponse,
  MagicLink,
  Organization,
  PlanList,
  SetupRecord,
  Subscription,
  SubscriptionList,
  TokenResponse,
  User,
  WebhookEvent,
  WebhookWithSecret,
} from "pulumi-dmarc-partner/api";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ApiCaller,
  control,
  type Receiver,
  startReceiver,
  startTestEmulator,
  type TestEmulator,
  waitFor,
} from "./helpers";

let t: TestEmulator;
let receiver: Receiver;

beforeAll(async () => {
  t = await startTestEmulator({ dns: { checkIntervalMs: 50 } });
  receiver = await startReceiver();
});

afterAll(async () => {
  await t.close();
  await receiver.close();
});

function verifiedEvents(secret: string) {
  return receiver.received.map((request) => {
    const payload = new Webhook(secret).verify(request.body, {
      "webhook-id": String(request.headers["webhook-id"]),
      "webhook-timestamp": String(request.headers["webhook-timestamp"]),
      "webhook-signature": String(request.headers["webhook-signature"]),
    });
    return WebhookEvent.parse(payload);
  });
}

describe("the spec's onboarding order, end to end over HTTP", () => {
  it("creates an organisation, group, webhook and domain, publishes the record and hears domain.verified", async () => {
    const partner = t.emulator.partners[0];
    if (!partner) throw new Error("no partner");
    const tokenResponse = await fetch(`${t.emulator.url}/auth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "client_credentials",
        client_id: partner.clientId,
        client_secret: partner.clientSecret,
      }),
    });
    expect(tokenResponse.status).toBe(200);
    const token = TokenResponse.parse(await tokenResponse.json());
    expect(token.expires_in).toBe(3600);
    const api = new ApiCaller(t.emulator.url, token.access_token);

    const organization = await api.call("POST", "/v1/organizations", { body: { name: "Acme" }, schema: Organization });
    expect(organization.status).toBe(201);
    expect(organization.body.id).toMatch(/^org_[0-9a-f]{24}$/);
    const organizationId = organization.body.id;

    const group = await api.call("POST", "/v1/domain-groups", {
      body: { organizationId, name: "Marketing" },
      schema: DomainGroup,
    });
    expect(group.status).toBe(201);
    expect(group.body.id).toMatch(/^dmngrp_[0-9a-f]{24}$/);

    const webhook = await api.call("POST", "/v1/webhooks", {
      body: {
        name: "events",
        ownerId: partner.id,
        url: receiver.url,
        events: ["domain.created", "domain.verified", "report.received"],
      },
      schema: WebhookWithSecret,
    });
    expect(webhook.status).toBe(201);
    expect(webhook.body.objectId).toMatch(/^wh_[0-9a-f]{24}$/);
    expect(Buffer.from(webhook.body.secret.replace(/^whsec_/, ""), "base64").length).toBeGreaterThanOrEqual(24);

    const domain = await api.call("POST", "/v1/domains", {
      body: { organizationId, domain: "acme.example", type: "sending", groupId: group.body.id },
      schema: DomainSchema,
    });
    expect(domain.status).toBe(201);
    expect(domain.body).toEqual({
      domain: "acme.example",
      type: "sending",
      policy: "missing",
      domainVerified: false,
      domainGroup: "Marketing",
      domainGroupId: group.body.id,
    });

    const created = await waitFor("domain.created", () => (receiver.received.length >= 1 ? true : undefined));
    expect(created).toBe(true);
    const [createdEvent] = verifiedEvents(webhook.body.secret);
    expect(DomainCreatedEvent.parse(createdEvent)).toEqual({
      data: { domain: "acme.example", organizationId, type: "sending", groupId: group.body.id },
      metadata: { eventName: "domain.created", ownerId: partner.id },
    });

    const setup = await api.call("GET", "/v1/domains/acme.example/setup", {
      query: { type: "TXT", organizationId },
      schema: SetupRecord,
    });
    expect(setup.body.host).toBe("_dmarc.acme.example");
    expect(setup.body.type).toBe("txt");
    expect(setup.body.value).toMatch(/^v=DMARC1; p=none; rua=mailto:[^;]+@[^;]+; fo=1$/);

    const published = await control(t.emulator, "PUT", "/dns/records", {
      name: setup.body.host,
      type: "TXT",
      values: [setup.body.value],
    });
    expect(published.status).toBe(204);

    await waitFor("domain.verified", () => (receiver.received.length >= 2 ? true : undefined));
    const verified = DomainVerifiedEvent.parse(verifiedEvents(webhook.body.secret)[1]);
    expect(verified.data).toEqual({ domain: "acme.example", verificationStatus: "success" });

    const after = await api.call("GET", "/v1/domains/acme.example", {
      query: { organizationId },
      schema: DomainSchema,
    });
    expect(after.body).toMatchObject({ domainVerified: true, policy: "none" });
  });
});

describe("the spec's partner order, end to end over HTTP", () => {
  it("creates an organisation, invites an admin, assigns a plan, issues a magic link and offboards", async () => {
    const api = t.alpha;
    const organization = await api.call("POST", "/v1/organizations", {
      body: { name: "Globex" },
      schema: Organization,
    });
    const organizationId = organization.body.id;

    const invite = await api.call("POST", "/v1/users/invite", {
      body: {
        organizationId,
        permissions: { users: [{ email: "Admin@Globex.example" }], organization: { role: "admin" } },
      },
      schema: InviteUserResponse,
    });
    expect(invite.status).toBe(200);
    const [invited] = invite.body.users;
    // The description reads users by a UUID.
    expect(invited?.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(invited?.email).toBe("admin@globex.example");

    const byEmail = await api.call("GET", "/v1/users/admin@globex.example", {
      query: { organizationId },
      schema: User,
    });
    expect(byEmail.body.id).toBe(invited?.id);

    const plans = await api.call("GET", "/v1/partners/plans", { schema: PlanList });
    expect(plans.body.map((plan) => plan.name)).toEqual(["Starter", "Business"]);
    for (const plan of plans.body) expect(plan.prices.map((price) => price.frequency).sort()).toEqual(["m", "y"]);
    const otherPlans = await t.beta.call("GET", "/v1/partners/plans", { schema: PlanList });
    const alphaPrices = plans.body.flatMap((plan) => plan.prices.map((price) => price.id));
    const betaPrices = otherPlans.body.flatMap((plan) => plan.prices.map((price) => price.id));
    expect(alphaPrices.filter((id) => betaPrices.includes(id))).toEqual([]);
    const starterMonthly = plans.body[0]?.prices.find((price) => price.frequency === "m")?.id ?? "";
    const businessYearly = plans.body[1]?.prices.find((price) => price.frequency === "y")?.id ?? "";

    const assigned = await api.call("POST", "/v1/partners/subscriptions/assign", {
      body: { organizationId, priceId: starterMonthly },
      schema: Subscription,
    });
    expect(assigned.status).toBe(201);
    expect(assigned.body.id).toMatch(/^sub_[0-9a-f]{24}$/);
    expect(assigned.body.cancelledAt).toBeNull();
    expect(assigned.body.items[0]).toMatchObject({ priceId: starterMonthly, features: { domainCount: 5 } });

    const link = await api.call("POST", "/auth/magic-link", {
      body: { userId: "admin@globex.example", organizationId, redirectUri: "https://dashboard.example/welcome" },
      schema: MagicLink,
    });
    expect(link.status).toBe(200);
    expect(link.body.url.startsWith(`${t.emulator.url}/auth/magic/`)).toBe(true);
    expect(Date.parse(link.body.expiringAt)).toBeGreaterThan(Date.now());
    const first = await fetch(link.body.url, { redirect: "manual" });
    expect(first.status).toBe(302);
    expect(first.headers.get("location")).toBe("https://dashboard.example/welcome");
    const signedIn = await api.call("GET", `/v1/users/${invited?.id}`, { query: { organizationId }, schema: User });
    expect(signedIn.body.emailVerified).toBe(true);

    // Offboarding and plan moves: a price change answers a new subscription and cancels the old one.
    const upgraded = await api.call("POST", `/v1/partners/subscriptions/${assigned.body.id}`, {
      body: { priceId: businessYearly },
      schema: Subscription,
    });
    expect(upgraded.status).toBe(200);
    expect(upgraded.body.id).not.toBe(assigned.body.id);
    expect(upgraded.body.items[0]?.features?.domainCount).toBe(50);

    const renewed = await api.call("POST", `/v1/partners/subscriptions/${upgraded.body.id}/renew`, {
      schema: Subscription,
    });
    const extendedBy = Date.parse(renewed.body.expireDate) - Date.parse(upgraded.body.expireDate);
    expect(extendedBy / 86_400_000).toBeGreaterThanOrEqual(365);
    expect(extendedBy / 86_400_000).toBeLessThanOrEqual(366);

    const cancelled = await api.call("POST", `/v1/partners/subscriptions/${upgraded.body.id}/cancel`, {
      schema: Subscription,
    });
    expect(cancelled.body.cancelledAt).not.toBeNull();

    const listed = await api.call("GET", "/v1/partners/subscriptions", {
      query: { organizationId },
      schema: SubscriptionList,
    });
    expect(listed.body.map((subscription) => [subscription.id, subscription.cancelledAt !== null])).toEqual([
      [assigned.body.id, true],
      [upgraded.body.id, true],
    ]);

    const removed = await api.call("DELETE", `/v1/organizations/${organizationId}`);
    expect(removed.status).toBe(204);
    const gone = await api.call("GET", `/v1/organizations/${organizationId}`);
    expect(gone.status).toBe(404);

    const state = await control<Record<string, Array<Record<string, unknown>>>>(t.emulator, "GET", "/state");
    const orphans = Object.entries(state.body)
      .filter(([key]) => key !== "version" && key !== "tokens")
      .flatMap(([, records]) => records.filter((record) => JSON.stringify(record).includes(organizationId)));
    expect(orphans).toEqual([]);
  });
});
