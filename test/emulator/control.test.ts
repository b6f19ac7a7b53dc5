import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RequestWindow, StatsView } from "dmarc-partner-emulator";
import { Organization, OrganizationList } from "pulumi-dmarc-partner/api";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { control, expectRefusal, startTestEmulator, type TestEmulator, waitFor } from "./helpers";

let t: TestEmulator;
const requestLog = join(mkdtempSync(join(tmpdir(), "dmarc-emulator-")), "requests.jsonl");

beforeAll(async () => {
  t = await startTestEmulator({ requestLogFile: requestLog });
});

afterAll(() => t.close());

beforeEach(async () => {
  expect((await control(t.emulator, "POST", "/reset")).status).toBe(204);
});

const createOrganization = (name = "F") => t.alpha.call("POST", "/v1/organizations", { body: { name } });

async function addFault(fault: Record<string, unknown>) {
  const answer = await control<{ id: string }>(t.emulator, "POST", "/faults", fault);
  expect(answer.status).toBe(201);
  return answer.body.id;
}

async function stats() {
  return (await control<StatsView>(t.emulator, "GET", "/stats")).body;
}

describe("fault injection", () => {
  it("fails the next N matching requests with the chosen status", async () => {
    await addFault({ route: "POST /v1/organizations", errorStatus: 502, times: 2 });
    expectRefusal(await createOrganization(), 502, "InternalServerError");
    expectRefusal(await createOrganization(), 502, "InternalServerError");
    expect((await createOrganization()).status).toBe(201);
    // Other routes were never affected.
    expect((await t.alpha.call("GET", "/v1/organizations")).status).toBe(200);
  });

  it("defaults to 503 for an error rate", async () => {
    await addFault({ errorRate: 1, times: 1 });
    expectRefusal(await t.alpha.call("GET", "/v1/partners/plans"), 503, "InternalServerError");
  });

  it("rate limits with 429, retryAfterSeconds and Retry-After beyond the rate", async () => {
    await addFault({
      route: "GET /v1/organizations",
      rateLimit: { requests: 2, perSeconds: 60, retryAfterSeconds: 7 },
    });
    expect((await t.alpha.call("GET", "/v1/organizations")).status).toBe(200);
    expect((await t.alpha.call("GET", "/v1/organizations")).status).toBe(200);
    const limited = await t.alpha.call("GET", "/v1/organizations");
    expectRefusal(limited, 429, "RateLimitExceeded", { details: { limit: 2, period: "60s", retryAfterSeconds: 7 } });
    expect(limited.headers.get("retry-after")).toBe("7");
    expect((await stats()).rateLimited).toBe(1);
  });

  it("rate limits without hints, as the published example of a 429", async () => {
    await addFault({ route: "GET /v1/organizations", rateLimit: { requests: 1, perSeconds: 60, hints: "none" } });
    expect((await t.alpha.call("GET", "/v1/organizations")).status).toBe(200);
    const limited = await t.alpha.call("GET", "/v1/organizations");
    const body = expectRefusal(limited, 429, "RateLimitExceeded", { details: { limit: 1, period: "60s" } });
    expect(body.details).not.toHaveProperty("retryAfterSeconds");
    expect(limited.headers.get("retry-after")).toBeNull();
  });

  it.each([
    ["header", { header: "3", body: undefined }],
    ["body", { header: null, body: 3 }],
  ] as const)("rate limits with the %s hint only", async (hints, expected) => {
    await addFault({
      route: "GET /v1/organizations",
      rateLimit: { requests: 1, perSeconds: 60, retryAfterSeconds: 3, hints },
    });
    await t.alpha.call("GET", "/v1/organizations");
    const limited = await t.alpha.call("GET", "/v1/organizations");
    expect(limited.headers.get("retry-after")).toBe(expected.header);
    expect((limited.body as { details: Record<string, unknown> }).details.retryAfterSeconds).toBe(expected.body);
  });

  it("counts a fixed window per period of the clock, and says when the period ends", async () => {
    // A period of an hour: the two requests below fall in the same one unless the test runs across its end.
    const periodMs = 3_600_000;
    const startedIn = Math.floor(Date.now() / periodMs);
    await addFault({ route: "GET /v1/organizations", rateLimit: { requests: 1, perSeconds: 3600, window: "fixed" } });
    expect((await t.alpha.call("GET", "/v1/organizations")).status).toBe(200);
    const limited = await t.alpha.call("GET", "/v1/organizations");
    if (Math.floor(Date.now() / periodMs) !== startedIn) return;
    expect(limited.status).toBe(429);
    const untilEnd = ((startedIn + 1) * periodMs - Date.now()) / 1000;
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(Math.floor(untilEnd));
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil(untilEnd) + 1);
    const listed = (await control<Array<{ rateLimit: unknown }>>(t.emulator, "GET", "/faults")).body;
    expect(listed[0]?.rateLimit).toEqual({ requests: 1, perSeconds: 3600, hints: "both", window: "fixed" });
  });

  it("adds latency", async () => {
    await addFault({ route: "GET /v1/partners/plans", latencyMs: 200 });
    const started = performance.now();
    expect((await t.alpha.call("GET", "/v1/partners/plans")).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
  });

  it("holds many requests at once without a listener warning", async () => {
    await addFault({ route: "GET /v1/partners/plans", latencyMs: 100 });
    const warnings: string[] = [];
    const collect = (warning: Error) => warnings.push(warning.name);
    process.on("warning", collect);
    try {
      const answers = await Promise.all(Array.from({ length: 20 }, () => t.alpha.call("GET", "/v1/partners/plans")));
      expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(200));
      // A warning is emitted on the next tick of the process.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("warning", collect);
    }
    expect(warnings).not.toContain("MaxListenersExceededWarning");
  });

  it("drops the connection before or after performing the operation", async () => {
    await addFault({ route: "POST /v1/organizations", dropRate: 1, times: 1 });
    await expect(createOrganization("dropped-before")).rejects.toThrow();
    await addFault({ route: "POST /v1/organizations", dropAfterProcessing: true, times: 1 });
    await expect(createOrganization("dropped-after")).rejects.toThrow();
    const list = await t.alpha.call("GET", "/v1/organizations", { schema: OrganizationList });
    expect(list.body.data.map((organization) => organization.name)).toEqual(["dropped-after"]);
    expect((await stats()).dropped).toBe(2);
  });

  it("carries out a request held in processing though its caller gave up, and none held before it was received", async () => {
    /** Sends an organisation's create and gives up on it once the emulator has it. */
    const abandoned = async (name: string, fault: Record<string, unknown>) => {
      await addFault({ route: "POST /v1/organizations", times: 1, ...fault });
      const before = (await stats()).requests;
      const caller = new AbortController();
      const sent = fetch(`${t.emulator.url}/v1/organizations`, {
        method: "POST",
        headers: { authorization: `Bearer ${t.alpha.token}`, "content-type": "application/json" },
        body: JSON.stringify({ name }),
        signal: caller.signal,
      }).catch(() => undefined);
      await waitFor("the create to reach the emulator", async () => (await stats()).requests > before || undefined);
      caller.abort();
      await sent;
    };
    const names = async () =>
      (await t.alpha.call("GET", "/v1/organizations", { schema: OrganizationList })).body.data.map(
        (organization) => organization.name,
      );
    // The hold before receipt ends first: by the time the other is carried out, this one's fate is settled.
    await abandoned("held-before", { latencyMs: 500 });
    await abandoned("held-in-processing", { processingMs: 1_500 });
    const found = await waitFor("the held create to be carried out", async () => {
      const listed = await names();
      return listed.length > 0 ? listed : undefined;
    });
    expect(found).toEqual(["held-in-processing"]);
  });

  it("lists, removes and clears faults, and refuses unknown routes", async () => {
    const id = await addFault({ route: "GET /v1/organizations", errorRate: 1 });
    expect((await control<Array<{ id: string }>>(t.emulator, "GET", "/faults")).body.map((fault) => fault.id)).toEqual([
      id,
    ]);
    expect((await control(t.emulator, "DELETE", `/faults/${id}`)).status).toBe(204);
    expect((await t.alpha.call("GET", "/v1/organizations")).status).toBe(200);
    expect((await control(t.emulator, "DELETE", `/faults/${id}`)).status).toBe(404);
    await addFault({ errorRate: 1 });
    expect((await control(t.emulator, "DELETE", "/faults")).status).toBe(204);
    expect((await t.alpha.call("GET", "/v1/organizations")).status).toBe(200);
    const unknown = await control(t.emulator, "POST", "/faults", { route: "GET /v1/nothing" });
    expect(unknown.status).toBe(400);
  });
});

describe("stats, reset and state", () => {
  it("counts API requests by route pattern and status, not control-plane ones", async () => {
    const id = (await createOrganization()).body as { id: string };
    await t.alpha.call("GET", `/v1/organizations/${id.id}`);
    await t.alpha.call("GET", "/v1/organizations/org_000000000000000000000000");
    await control(t.emulator, "GET", "/state");
    expect(await stats()).toEqual({
      requests: 3,
      byRoute: { "POST /v1/organizations": 1, "GET /v1/organizations/:organizationId": 2 },
      byStatus: { "201": 1, "200": 1, "404": 1 },
      rateLimited: 0,
      dropped: 0,
      window: expect.any(Object),
    });
  });

  it("times the API requests of a window: the first arrival and the last answer since it opened", async () => {
    await createOrganization();
    const opened = (await control<RequestWindow>(t.emulator, "POST", "/stats/window")).body;
    expect(opened.firstRequestAt).toBeNull();
    await control(t.emulator, "GET", "/state");
    expect((await stats()).window).toEqual({ openedAt: opened.openedAt, firstRequestAt: null, lastAnsweredAt: null });

    const before = Date.now();
    await createOrganization();
    await createOrganization();
    const after = Date.now();
    const { window, requests } = await stats();
    expect(requests).toBe(3);
    expect(window.firstRequestAt).toBeGreaterThanOrEqual(before);
    expect(window.lastAnsweredAt).toBeGreaterThanOrEqual(window.firstRequestAt ?? Number.POSITIVE_INFINITY);
    expect(window.lastAnsweredAt).toBeLessThanOrEqual(after);
  });

  it("forgets objects on reset while partners and issued tokens stay", async () => {
    const partner = t.emulator.partners[1];
    const issued = await fetch(`${t.emulator.url}/auth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `grant_type=client_credentials&client_id=${partner?.clientId}&client_secret=${partner?.clientSecret}`,
    });
    const { access_token } = (await issued.json()) as { access_token: string };
    await createOrganization();
    expect((await control<{ organizations: unknown[] }>(t.emulator, "GET", "/state")).body.organizations).toHaveLength(
      1,
    );
    await control(t.emulator, "POST", "/reset");
    const state = await control<{ organizations: unknown[] }>(t.emulator, "GET", "/state");
    expect(state.body.organizations).toEqual([]);
    expect((await stats()).requests).toBe(0);
    expect((await createOrganization()).status).toBe(201);
    expect((await t.beta.call("GET", "/v1/organizations", { token: access_token })).status).toBe(200);
  });
});

describe("path spellings", () => {
  it("answers the /v1.0 spelling and the unprefixed reference paths", async () => {
    const created = await t.alpha.call("POST", "/v1.0/organizations", { body: { name: "v1.0" }, schema: Organization });
    expect(created.status).toBe(201);
    const read = await t.alpha.call("GET", `/organizations/${created.body.id}`, { schema: Organization });
    expect(read.body.name).toBe("v1.0");
    const subscriptions = await t.alpha.call("GET", "/partners/subscriptions", {
      query: { organizationId: created.body.id },
    });
    expect(subscriptions.body).toEqual([]);
    expect((await stats()).byRoute["POST /v1/organizations"]).toBe(1);
  });

  it("pages lists with limit, at most 100 a page", async () => {
    for (let index = 0; index < 3; index += 1) await createOrganization(`p${index}`);
    const page = await t.alpha.call("GET", "/v1/organizations", {
      query: { page: "2", limit: "2" },
      schema: OrganizationList,
    });
    expect(page.body.data.map((organization) => organization.name)).toEqual(["p2"]);
    expect(page.body.meta).toEqual({
      total: 3,
      limit: 2,
      page: 2,
      pageCount: 2,
      hasPreviousPage: true,
      hasNextPage: false,
    });
    expectRefusal(await t.alpha.call("GET", "/v1/organizations", { query: { limit: "101" } }), 400, "ValidationError", {
      fields: ["limit"],
    });
  });
});

describe("request log", () => {
  it("writes one JSON line per API request with secrets redacted", async () => {
    const partner = t.emulator.partners[0];
    const token = await fetch(`${t.emulator.url}/auth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `grant_type=client_credentials&client_id=${partner?.clientId}&client_secret=${partner?.clientSecret}`,
    });
    const { access_token } = (await token.json()) as { access_token: string };
    const webhook = await t.alpha.call("POST", "/v1/webhooks", {
      body: { name: "w", ownerId: partner?.id, url: "https://hooks.example", events: ["domain.created"] },
    });
    const secret = (webhook.body as { secret: string }).secret;
    const organizationId = ((await createOrganization()).body as { id: string }).id;
    await t.alpha.call("POST", "/v1/users/invite", {
      body: { organizationId, permissions: { users: [{ email: "a@b.example" }], organization: { role: "admin" } } },
    });
    const link = await t.alpha.call("POST", "/auth/magic-link", {
      body: { userId: "a@b.example", organizationId, redirectUri: "https://d.example" },
    });
    const linkToken = (link.body as { url: string }).url.split("/").pop() ?? "";
    await fetch((link.body as { url: string }).url, { redirect: "manual" });
    const lines = await waitFor("the logged magic-link use", () => {
      const logged = readFileSync(requestLog, "utf8").trim().split("\n");
      return logged.some((line) => line.includes('"GET","path":"/auth/magic/')) ? logged : undefined;
    });
    const text = lines.join("\n");
    for (const leaked of [partner?.clientSecret ?? "", access_token, secret, linkToken]) {
      expect(leaked.length).toBeGreaterThan(8);
      expect(text).not.toContain(leaked);
    }
    const tokenLine = lines
      .map((line) => JSON.parse(line))
      .findLast((entry) => entry.path === "/auth/token" && entry.body?.client_id === partner?.clientId);
    expect(tokenLine).toMatchObject({
      method: "POST",
      status: 200,
      body: { client_id: partner?.clientId, client_secret: "[REDACTED]" },
      response: { access_token: "[REDACTED]", token_type: "Bearer" },
      partnerId: null,
    });
    const webhookLine = lines.map((line) => JSON.parse(line)).find((entry) => entry.path === "/v1/webhooks");
    expect(webhookLine).toMatchObject({ status: 201, partnerId: partner?.id, response: { secret: "[REDACTED]" } });
    expect(text).not.toContain("_emulator");
  });
});
