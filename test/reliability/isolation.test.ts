import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as dmarc from "pulumi-dmarc-partner";
import {
  closeClients,
  createClient,
  DmarcApiError,
  type DmarcClient,
  OrganizationGoneError,
} from "pulumi-dmarc-partner/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { createTestStack } from "../support/engine";
import { emulatorState, randomPartners, report } from "./harness";
import { startTamperingProxy } from "./proxy";

// Transport rules through the provider's configuration, and isolation
// between partners. test/client/policy.test.ts and wire.test.ts cover the
// client's own rules (plain http only to loopback, no token across a
// redirect to another host); here they hold for a stack's `dmarc:*` config in
// a real `pulumi up`. test/emulator/refusals.test.ts checks that another
// partner's organisation answers 404; here every route a partner could use
// on another's objects is tried, and nothing changes.

const [alpha, beta] = randomPartners("isolation");
let handle: EmulatorHandle;
let asAlpha: DmarcClient;
let asBeta: DmarcClient;

beforeAll(async () => {
  handle = await startTestEmulator({ partners: [alpha, beta] });
  const client = (partner: typeof alpha) =>
    createClient({ baseUrl: handle.emulator.url, clientId: partner.clientId, clientSecret: partner.clientSecret });
  asAlpha = client(alpha);
  asBeta = client(beta);
});

afterAll(async () => {
  await closeClients();
  await handle?.emulator.close();
});

describe("transport rules through the provider configuration", () => {
  it("refuses a plain http base address that is not loopback before sending anything", async () => {
    const requestsBefore = (await handle.control<{ requests: number }>("GET", "/stats")).requests;
    const stack = await createTestStack({
      projectName: "reliability-plain-http",
      program: async () => {
        new dmarc.Organization("org", { name: "Plain Ltd" });
        return {};
      },
      config: { ...handle.stackConfig, "dmarc:baseUrl": { value: "http://dmarc.example.com" } },
    });
    try {
      const failure = await stack.preview().then(
        () => "the preview succeeded",
        (error: Error) => error.message,
      );
      expect(failure).toContain(
        "dmarc:baseUrl (environment variable DMARC_BASE_URL) uses plain http:// to a host that is not this machine (http://dmarc.example.com); the token would travel unencrypted",
      );
      expect(failure).not.toContain(alpha.clientSecret);
      expect((await handle.control<{ requests: number }>("GET", "/stats")).requests).toBe(requestsBefore);
    } finally {
      await stack.workspace.removeStack(stack.name, { force: true });
    }
  }, 120_000);

  it("never follows an API call's redirect to another host, so the token stays home", async () => {
    let elsewhereSeen = 0;
    const elsewhere: Server = createServer((_request, response) => {
      elsewhereSeen += 1;
      response.writeHead(201, { "content-type": "application/json" }).end("{}");
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, "127.0.0.1", resolve));
    const { port } = elsewhere.address() as AddressInfo;
    // Another origin on this machine: same address, another port.
    const redirecting = await startTamperingProxy(handle.emulator.url, [
      {
        name: "redirect",
        method: "POST",
        path: /^\/v1\/organizations$/,
        forward: false,
        answer: () => ({
          status: 307,
          headers: { location: `http://127.0.0.1:${port}/v1/organizations` },
          body: "",
        }),
      },
    ]);
    const stack = await createTestStack({
      projectName: "reliability-redirect",
      program: async () => {
        new dmarc.Organization("org", { name: "Redirected Ltd" });
        return {};
      },
      config: { ...handle.stackConfig, "dmarc:baseUrl": { value: redirecting.url } },
    });
    try {
      const failure = await stack.up().then(
        () => "the up succeeded",
        (error: Error) => error.message,
      );
      expect(failure).toContain(`a redirect to another address (http://127.0.0.1:${port})`);
      expect(failure).toContain("set baseUrl to it");
      expect(redirecting.applied.redirect).toBe(1);
      expect(elsewhereSeen).toBe(0);
    } finally {
      await stack.workspace.removeStack(stack.name, { force: true });
      await redirecting.close();
      elsewhere.closeAllConnections();
      await new Promise((resolve) => elsewhere.close(resolve));
    }
  }, 120_000);
});

describe("isolation between partners", () => {
  it("lets no route read or change another partner's objects", async () => {
    // Alpha's tenant, complete.
    const organization = await asAlpha.createOrganization({ name: "Alpha Tenant Ltd" });
    const organizationId = organization.id;
    const group = await asAlpha.createDomainGroup({ organizationId, name: "main" });
    await asAlpha.createDomain({ organizationId, domain: "alpha.example", type: "sending", groupId: group.id });
    const webhook = await asAlpha.createWebhook({
      name: "alpha events",
      ownerId: organizationId,
      url: "http://127.0.0.1:9/alpha",
      events: ["domain.created"],
    });
    const [alphaPlan] = await asAlpha.listPlans();
    const alphaPrice = alphaPlan?.prices[0]?.id ?? "";
    const subscription = await asAlpha.assignSubscription({ organizationId, priceId: alphaPrice });
    await asAlpha.inviteUser({
      organizationId,
      permissions: { users: [{ email: "admin@alpha.example" }], organization: { role: "admin" } },
    });
    const user = await asAlpha.getUser(organizationId, "admin@alpha.example");
    const [betaPlan] = await asBeta.listPlans();
    const betaPrice = betaPlan?.prices[0]?.id ?? "";
    const before = await emulatorState(handle);

    type Expected = "not found" | "nothing" | "refused";
    const attempts: [string, () => Promise<unknown>, Expected][] = [
      ["list organizations", () => asBeta.listOrganizations(), "nothing"],
      ["read the organization", () => asBeta.getOrganization(organizationId), "nothing"],
      ["rename the organization", () => asBeta.updateOrganization(organizationId, { name: "Taken" }), "not found"],
      ["delete the organization", () => asBeta.deleteOrganization(organizationId), "nothing"],
      ["list its groups", () => asBeta.listDomainGroups(organizationId), "not found"],
      ["add a group", () => asBeta.createDomainGroup({ organizationId, name: "intruder" }), "not found"],
      ["read the group", () => asBeta.getDomainGroup(organizationId, group.id), "nothing"],
      ["rename the group", () => asBeta.updateDomainGroup(organizationId, group.id, { name: "x" }), "not found"],
      ["delete the group", () => asBeta.deleteDomainGroup(organizationId, group.id), "nothing"],
      ["list its domains", () => asBeta.listDomains(organizationId), "not found"],
      [
        "add a domain",
        () => asBeta.createDomain({ organizationId, domain: "intruder.example", type: "sending", groupId: group.id }),
        "not found",
      ],
      ["read the domain", () => asBeta.getDomain(organizationId, "alpha.example"), "nothing"],
      [
        "change the domain",
        () => asBeta.updateDomain(organizationId, "alpha.example", { type: "parked" }),
        "not found",
      ],
      ["read its setup record", () => asBeta.getSetupRecord(organizationId, "alpha.example", "TXT"), "not found"],
      ["delete the domain", () => asBeta.deleteDomain(organizationId, "alpha.example"), "nothing"],
      ["read the webhook", () => asBeta.getWebhook(webhook.objectId), "nothing"],
      ["list the organization's webhooks", () => asBeta.listWebhooks(organizationId), "nothing"],
      [
        "change the webhook",
        () => asBeta.updateWebhook(webhook.objectId, { url: "https://evil.example/x" }),
        "not found",
      ],
      ["take the webhook's secret", () => asBeta.regenerateWebhookSecret(webhook.objectId), "not found"],
      ["list the webhook's deliveries", () => asBeta.listDeliveries(webhook.objectId), "not found"],
      ["delete the webhook", () => asBeta.deleteWebhook(webhook.objectId), "nothing"],
      [
        "add a webhook owned by the organization",
        () =>
          asBeta.createWebhook({
            name: "intruder",
            ownerId: organizationId,
            url: "https://evil.example/x",
            events: ["domain.created"],
          }),
        "refused",
      ],
      ["list its subscriptions", () => asBeta.listSubscriptions(organizationId), "not found"],
      ["subscribe it", () => asBeta.assignSubscription({ organizationId, priceId: betaPrice }), "not found"],
      ["change its price", () => asBeta.changeSubscriptionPrice(subscription.id, betaPrice), "not found"],
      ["renew its subscription", () => asBeta.renewSubscription(subscription.id), "not found"],
      ["cancel its subscription", () => asBeta.cancelSubscription(subscription.id), "not found"],
      [
        "invite into it",
        () =>
          asBeta.inviteUser({
            organizationId,
            permissions: { users: [{ email: "intruder@beta.example" }], organization: { role: "admin" } },
          }),
        "not found",
      ],
      ["read its user", () => asBeta.getUser(organizationId, "admin@alpha.example"), "nothing"],
      [
        "revoke its user",
        () => asBeta.revokeOrganizationAccess({ organizationId, userIds: [user?.id ?? ""] }),
        "not found",
      ],
      [
        "sign in as its user",
        () =>
          asBeta.createMagicLink({
            userId: "admin@alpha.example",
            organizationId,
            redirectUri: "https://evil.example/",
          }),
        "not found",
      ],
    ];

    const outcomes: Record<string, string> = {};
    for (const [name, attempt, expected] of attempts) {
      const outcome = await attempt().then(
        (value) =>
          value === undefined || value === false || (Array.isArray(value) && value.length === 0) ? "nothing" : value,
        (error: unknown) => {
          // A refusal the client traced to an organisation it cannot see: gone, for this partner.
          if (error instanceof OrganizationGoneError) return "not found";
          if (!(error instanceof DmarcApiError)) throw error;
          // The description answers 403 where another partner's organisation is named on its children's routes.
          if (error.status === 404 || error.status === 403) return "not found";
          return error.status === 400 || error.status === 422 ? "refused" : `answered ${error.status}`;
        },
      );
      outcomes[name] = typeof outcome === "string" ? outcome : JSON.stringify(outcome);
      expect(outcomes[name], name).toBe(expected);
    }

    // Alpha's objects are exactly as they were. Beta's token is new, and delivery attempts go on by themselves.
    const after = await emulatorState(handle);
    expect({ ...after, tokens: [], deliveries: [] }).toEqual({ ...before, tokens: [], deliveries: [] });
    report("isolation", "another partner's token on every route", {
      routesTried: attempts.length,
      refused: Object.values(outcomes).filter((outcome) => outcome !== "nothing").length,
      sawNothing: Object.values(outcomes).filter((outcome) => outcome === "nothing").length,
      changed: 0,
    });
  });

  it("refuses to adopt another partner's organization through the engine", async () => {
    const foreign = await asAlpha.createOrganization({ name: "Foreign Ltd" });
    const stack = await createTestStack({
      projectName: "reliability-isolation",
      program: async () => {
        new dmarc.Organization("foreign", { name: "Foreign Ltd", importId: foreign.id });
        return {};
      },
      config: {
        ...handle.stackConfig,
        "dmarc:clientId": { value: beta.clientId },
        "dmarc:clientSecret": { value: beta.clientSecret, secret: true },
        "dmarc:partnerId": { value: beta.id },
      },
    });
    try {
      const failure = await stack.up().then(
        () => "the up succeeded",
        (error: Error) => error.message,
      );
      expect(failure).toContain(`Organization "${foreign.id}" does not exist (or belongs to another partner)`);
      expect(await asAlpha.getOrganization(foreign.id)).toMatchObject({ name: "Foreign Ltd" });
      expect(await asBeta.listOrganizations()).toEqual([]);
    } finally {
      await stack.workspace.removeStack(stack.name, { force: true });
    }
  }, 120_000);
});
