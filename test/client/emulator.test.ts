import { setTimeout as sleep } from "node:timers/promises";
import { type RunningEmulator, type StateSnapshot, startEmulator } from "dmarc-partner-emulator";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type ClientOptions,
  closeClients,
  createClient,
  DmarcApiError,
  DmarcTransportError,
  OutcomeUnknownError,
} from "../../provider/src/client";
import { failure } from "./loopback";

// The client against the emulator and its fault injection: the behaviour a
// large unattended `pulumi up` depends on.

interface Stats {
  requests: number;
  byRoute: Record<string, number>;
  byStatus: Record<string, number>;
  rateLimited: number;
  dropped: number;
}

let emulator: RunningEmulator;

async function control<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${emulator.url}/_emulator${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new Error(`control ${method} ${path}: ${response.status} ${await response.text()}`);
  const text = await response.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

const fault = (spec: Record<string, unknown>) => control("POST", "/faults", spec);
const stats = () => control<Stats>("GET", "/stats");
const state = () => control<StateSnapshot>("GET", "/state");

function partner() {
  const first = emulator.partners[0];
  if (!first) throw new Error("the emulator has no partner");
  return first;
}

function client(options: Partial<ClientOptions> = {}) {
  return createClient({
    baseUrl: emulator.url,
    clientId: partner().clientId,
    clientSecret: partner().clientSecret,
    retryBaseDelayMs: 5,
    retryMaxDelayMs: 50,
    ...options,
  });
}

beforeAll(async () => {
  emulator = await startEmulator({ port: 0, retryScale: 0.001 });
});
afterAll(async () => {
  await closeClients();
  await emulator.close();
});
afterEach(async () => {
  await closeClients();
  await control("POST", "/reset");
});

describe("tokens", () => {
  it("renews the token after the service expired it, with no failed call", async () => {
    const dmarc = client();
    const organization = await dmarc.createOrganization({ name: "Expiry Ltd" });
    await control("POST", "/tokens/expire");
    const reads = await Promise.all(Array.from({ length: 10 }, () => dmarc.getOrganization(organization.id)));
    expect(reads.every((read) => read?.id === organization.id)).toBe(true);
    const counted = await stats();
    expect(counted.byRoute["POST /auth/token"]).toBe(2);
    expect(counted.byStatus["401"]).toBeGreaterThan(0);
  });

  it("renews a short-lived token before it expires, so the service never refuses it", async () => {
    const shortLived = await startEmulator({ port: 0, tokenTtlSeconds: 2 });
    try {
      const own = shortLived.partners[0];
      if (!own) throw new Error("no partner");
      const dmarc = createClient({ baseUrl: shortLived.url, clientId: own.clientId, clientSecret: own.clientSecret });
      await dmarc.listPlans();
      // Past the renewal point (half of the 2 s lifetime, since the 60 s margin is longer), before expiry.
      await sleep(1_200);
      await dmarc.listPlans();
      const counted = (await (await fetch(`${shortLived.url}/_emulator/stats`)).json()) as Stats;
      expect(counted.byRoute["POST /auth/token"]).toBe(2);
      expect(counted.byStatus["401"]).toBeUndefined();
    } finally {
      await closeClients();
      await shortLived.close();
    }
  });
});

describe("faults absorbed within the bounds", () => {
  it("absorbs a 429 storm without an error or a duplicate", async () => {
    await fault({ route: "*", rateLimit: { requests: 5, perSeconds: 1 } });
    const dmarc = client();
    const names = Array.from({ length: 15 }, (_, index) => `Storm ${index}`);
    const created = await Promise.all(names.map((name) => dmarc.createOrganization({ name })));
    expect(created.map((organization) => organization.name).sort()).toEqual([...names].sort());
    expect((await stats()).rateLimited).toBeGreaterThan(0);
    expect((await state()).organizations).toHaveLength(15);
  });

  it("absorbs 5xx answers on reads and creates", async () => {
    const dmarc = client({ maxAttempts: 10 });
    await fault({ route: "POST /v1/organizations", errorStatus: 502, times: 2 });
    await fault({ route: "GET /v1/organizations/:organizationId", errorStatus: 503, times: 3 });
    const created = await dmarc.createOrganization({ name: "Five Hundred" });
    await expect(dmarc.getOrganization(created.id)).resolves.toMatchObject({ name: "Five Hundred" });
    const counted = await stats();
    expect(counted.byRoute["POST /v1/organizations"]).toBe(3);
    expect(counted.byRoute["GET /v1/organizations/:organizationId"]).toBe(4);
    expect((await state()).organizations).toHaveLength(1);

    await fault({ route: "*", errorRate: 0.2, errorStatus: 503 });
    const mixed = await Promise.all([
      ...Array.from({ length: 20 }, () => dmarc.getOrganization(created.id)),
      ...Array.from({ length: 5 }, (_, index) => dmarc.createOrganization({ name: `Mixed ${index}` })),
    ]);
    expect(mixed.every((item) => item !== undefined)).toBe(true);
    expect((await stats()).byStatus["503"]).toBeGreaterThan(0);
  });

  it("absorbs latency beyond the request timeout on reads", async () => {
    await fault({ route: "GET /v1/partners/plans", latencyMs: 800, times: 2 });
    const plans = await client({ requestTimeoutMs: 300 }).listPlans();
    expect(plans.length).toBeGreaterThan(0);
    expect((await stats()).byRoute["GET /v1/partners/plans"]).toBe(3);
  });

  it("absorbs dropped connections on reads, updates and deletes", async () => {
    const dmarc = client({ maxAttempts: 10 });
    const organization = await dmarc.createOrganization({ name: "Dropped" });
    await fault({ route: "GET /v1/organizations/:organizationId", dropRate: 1, times: 2 });
    await fault({ route: "PATCH /v1/organizations/:organizationId", dropRate: 1, times: 1 });
    await expect(dmarc.getOrganization(organization.id)).resolves.toMatchObject({ name: "Dropped" });
    await expect(dmarc.updateOrganization(organization.id, { name: "Renamed" })).resolves.toMatchObject({
      name: "Renamed",
    });
    await fault({ route: "*", dropRate: 0.2 });
    const reads = await Promise.all(Array.from({ length: 20 }, () => dmarc.getOrganization(organization.id)));
    expect(reads.every((read) => read?.name === "Renamed")).toBe(true);
    await control("DELETE", "/faults");
    // The delete happens but its answer is lost; the repeat finds it gone.
    await fault({ route: "DELETE /v1/organizations/:organizationId", dropAfterProcessing: true, times: 1 });
    await expect(dmarc.deleteOrganization(organization.id)).resolves.toBe(false);
    expect((await state()).organizations).toHaveLength(0);
    expect((await stats()).dropped).toBeGreaterThan(3);
  });
});

describe("giving up", () => {
  it("fails a permanently failing route after the configured attempts, saying so", async () => {
    await fault({ route: "GET /v1/partners/plans", errorStatus: 503 });
    const error = await failure(client({ maxAttempts: 4 }).listPlans());
    expect(error).toBeInstanceOf(DmarcApiError);
    expect(error).toMatchObject({ status: 503, attempts: 4, operation: "list plans", path: "/v1/partners/plans" });
    expect(error.message).toMatch(/^list plans failed: GET \/v1\/partners\/plans answered 503 InternalServerError: /);
    expect(error.message).toContain("(after 4 attempts over");
    expect(error.message).toContain("What to do: the service is failing");
    expect((await stats()).byRoute["GET /v1/partners/plans"]).toBe(4);
  });

  it("fails a route that keeps dropping the connection after the configured attempts", async () => {
    await fault({ route: "GET /v1/partners/plans", dropRate: 1 });
    const error = await failure(client({ maxAttempts: 3 }).listPlans());
    expect(error).toBeInstanceOf(DmarcTransportError);
    expect(error.message).toContain("gave up after 3 attempts");
    expect((await stats()).byRoute["GET /v1/partners/plans"]).toBe(3);
  });

  it("reports an ambiguous create as outcome unknown and never sends it twice", async () => {
    const dmarc = client();
    await fault({ route: "POST /v1/organizations", dropAfterProcessing: true, times: 1 });
    const error = await failure(dmarc.createOrganization({ name: "Ambiguous Ltd" }));
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error).toMatchObject({ method: "POST", path: "/v1/organizations", operation: "create organization" });
    expect((await stats()).byRoute["POST /v1/organizations"]).toBe(1);
    expect((await state()).organizations.filter((item) => item.name === "Ambiguous Ltd")).toHaveLength(1);
    // What the resources do next: read back and adopt.
    const listed = await dmarc.listOrganizations();
    expect(listed.filter((organization) => organization.name === "Ambiguous Ltd")).toHaveLength(1);

    await fault({ route: "POST /v1/partners/subscriptions/assign", dropAfterProcessing: true, times: 1 });
    const [plan] = await dmarc.listPlans();
    const priceId = plan?.prices[0]?.id ?? "";
    const organizationId = listed[0]?.id ?? "";
    const assign = await failure(dmarc.assignSubscription({ organizationId, priceId }));
    expect(assign).toBeInstanceOf(OutcomeUnknownError);
    expect(await dmarc.listSubscriptions(organizationId)).toHaveLength(1);
  });
});

describe("pacing", () => {
  it("keeps to the configured requests per second, counted over a window", async () => {
    const rate = 20;
    const dmarc = client({ requestsPerSecond: rate });
    try {
      await dmarc.listPlans();
      const startedAt = performance.now();
      const calls = Promise.all(Array.from({ length: 70 }, () => dmarc.listPlans()));
      await sleep(500);
      const before = (await stats()).requests;
      await sleep(2_000);
      const after = (await stats()).requests;
      await calls;
      // Never faster than the rate, in a window or over the whole run; a busy machine may only be slower.
      expect((after - before) / 2).toBeLessThanOrEqual(rate * 1.2);
      expect((performance.now() - startedAt) / 1000).toBeGreaterThanOrEqual((70 - 1) / rate);
      expect(after - before).toBeGreaterThan(0);
    } finally {
      client({ requestsPerSecond: 0 });
    }
  });
});

describe("secrets", () => {
  it("puts no token, client secret, webhook secret or magic link in any message or log line", async () => {
    const lines: string[] = [];
    const messages: string[] = [];
    const log = (line: string) => lines.push(line);
    const record = async (pending: Promise<unknown>) => {
      try {
        await pending;
      } catch (error) {
        messages.push(String(error), (error as Error).stack ?? "");
      }
    };
    const dmarc = client({ log, maxAttempts: 2 });
    const organization = await dmarc.createOrganization({ name: "Secretive" });
    const webhook = await dmarc.createWebhook({
      name: "hook",
      ownerId: partner().id,
      url: "https://hooks.example.com/dmarc",
      events: ["domain.verified"],
    });
    await dmarc.regenerateWebhookSecret(webhook.objectId);
    await dmarc.inviteUser({
      organizationId: organization.id,
      permissions: { users: [{ email: "admin@example.com" }], organization: { role: "admin" } },
    });
    await dmarc.createMagicLink({
      userId: "admin@example.com",
      organizationId: organization.id,
      redirectUri: "https://app.example.com/",
    });
    const beforeExpiry = await state();
    await control("POST", "/tokens/expire");

    await record(dmarc.createOrganization({ name: "" }));
    await record(
      dmarc.createMagicLink({
        userId: "nobody@example.com",
        organizationId: organization.id,
        redirectUri: "https://x.example.com/",
      }),
    );
    await fault({ route: "POST /v1/webhooks", dropAfterProcessing: true, times: 1 });
    await record(
      dmarc.createWebhook({
        name: "h2",
        ownerId: partner().id,
        url: "https://hooks.example.com/2",
        events: ["domain.created"],
      }),
    );
    await fault({ route: "GET /v1/partners/plans", errorStatus: 503 });
    await record(dmarc.listPlans());
    await record(client({ log, clientSecret: "not-the-secret-4711" }).listPlans());
    await record(
      createClient({ baseUrl: emulator.url, accessToken: partner().tokens[0] ?? "", log, maxAttempts: 2 }).listPlans(),
    );
    await record(
      createClient({ baseUrl: emulator.url, accessToken: "made-up-token-0815", log }).getOrganization("org_1"),
    );

    const snapshot = await state();
    const secrets = [
      partner().clientSecret,
      "not-the-secret-4711",
      "made-up-token-0815",
      ...partner().tokens,
      ...[...beforeExpiry.tokens, ...snapshot.tokens].map((token) => token.token),
      ...snapshot.webhooks.map((item) => item.secret),
      webhook.secret,
      ...snapshot.magicLinks.map((link) => link.token),
    ];
    expect(messages.length).toBeGreaterThanOrEqual(12);
    expect(lines.length).toBeGreaterThan(15);
    expect(beforeExpiry.tokens.length + snapshot.tokens.length).toBeGreaterThanOrEqual(2);
    expect(snapshot.webhooks.length).toBe(2);
    expect(snapshot.magicLinks.length).toBe(1);
    const output = [...messages, ...lines].join("\n");
    for (const secret of secrets) expect(output).not.toContain(secret);
  });
});
