import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RunningEmulator, startEmulator } from "dmarc-partner-emulator";
import { beforeAll, describe, expect, it } from "vitest";
import { closeClients, createClient, type DmarcClient } from "../../provider/src/client";
import { PUBLISHED_ROUTES, publishedRouteOf } from "./openapi";

// Every answer the emulator gives in its "published" profile, checked against
// the service's OpenAPI description as restated in ./openapi.ts: a flow that
// calls every route this project uses, through the real client, plus the
// refusals the description lists.

/** Routes of the emulator that no partner program calls: the browser's side of a magic link. */
const EMULATOR_ONLY = [/^GET \/auth\/magic\//, /^GET \/auth\/signed-in$/];

interface Logged {
  method: string;
  path: string;
  body: unknown;
  status: number | null;
  response: unknown;
}

let emulator: RunningEmulator;
let dmarc: DmarcClient;
const requestLog = join(mkdtempSync(join(tmpdir(), "dmarc-contract-")), "requests.jsonl");

function partner() {
  const first = emulator.partners[0];
  if (!first) throw new Error("the emulator has no partner");
  return first;
}

async function raw(method: string, path: string, body?: unknown, token = partner().tokens[0]) {
  const response = await fetch(`${emulator.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return response.status;
}

const dayBefore = (day: string, days: number) =>
  new Date(Date.parse(day) - days * 86_400_000).toISOString().slice(0, 10);

/** The evidence reads of a policy ramp, over report days the emulator's clock has made, and their refusals. */
async function exerciseReportRoutes(organizationId: string, domains: string[]): Promise<void> {
  const clock = await fetch(`${emulator.url}/_emulator/clock`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ advanceDays: 2 }),
  });
  const { today } = (await clock.json()) as { today: string };
  const range = { from: dayBefore(today, 7), to: today };
  expect((await dmarc.authPassRates({ domains, ...range })).map((row) => row.domain).sort()).toEqual(domains);
  const volumes = await dmarc.volumeHistory({ domains, ...range, period: "week", groupByFields: ["report_type"] });
  expect(new Set(volumes.map((row) => row.domain))).toEqual(new Set(domains));
  expect((await dmarc.domainsOverview(organizationId, range)).map((view) => view.domain).sort()).toEqual(domains);
  const dateRange = { from: `${range.from}T00:00:00.000Z`, to: `${range.to}T00:00:00.000Z` };
  const tooLarge = { domainsWithReportTypes: [], dateRange, filters: {}, pageSize: 101 };
  expect(await raw("POST", "/v1/dmarc/rua/auth-pass-rates", tooLarge)).toBe(422);
  expect(await raw("POST", "/v1/dmarc/rua/volume-history", { ...tooLarge, pageSize: 1, period: "year" })).toBe(422);
  expect(await raw("POST", "/v1/domains/overview", { organizationId, startDate: "2026-02-30", endDate: today })).toBe(
    422,
  );
}

/** Calls every route the project uses, the happy way and the refused ways the description lists. */
async function exerciseEveryRoute(): Promise<void> {
  const start = new Date(Date.now() - 1000);
  const { id: organizationId } = await dmarc.createOrganization({ name: "Contract Ltd" });
  await dmarc.listOrganizations();
  await dmarc.getOrganization(organizationId);
  await dmarc.updateOrganization(organizationId, { name: "Contract Ltd 2" });
  const group = await dmarc.createDomainGroup({ organizationId, name: "Main" });
  await dmarc.listDomainGroups(organizationId);
  await dmarc.getDomainGroup(organizationId, group.id);
  await dmarc.updateDomainGroup(organizationId, group.id, { name: "Main 2" });
  await dmarc.listWebhooks(organizationId);
  const webhook = await dmarc.createWebhook({
    name: "events",
    ownerId: organizationId,
    url: "http://127.0.0.1:9/hook",
    events: ["domain.created"],
  });
  await dmarc.getWebhook(webhook.objectId);
  await dmarc.updateWebhook(webhook.objectId, { active: false });
  await dmarc.listWebhooks(organizationId);
  await dmarc.createDomain({ organizationId, domain: "contract.example", type: "sending", groupId: group.id });
  // Created together: one batch call.
  await Promise.all(
    ["one.contract.example", "two.contract.example"].map((domain) =>
      dmarc.createDomain({ organizationId, domain, type: "parked", groupId: group.id }),
    ),
  );
  await dmarc.listDomains(organizationId);
  await dmarc.getDomain(organizationId, "contract.example");
  await dmarc.updateDomain(organizationId, "contract.example", { type: "parked" });
  await dmarc.getSetupRecord(organizationId, "contract.example", "TXT");
  await dmarc.getSetupRecord(organizationId, "contract.example", "CNAME");
  await dmarc.listDeliveries(webhook.objectId);
  await exerciseReportRoutes(organizationId, ["contract.example", "one.contract.example", "two.contract.example"]);

  const [plan] = await dmarc.listPlans();
  const [monthly, yearly] = plan?.prices ?? [];
  if (!monthly || !yearly) throw new Error("the demo catalogue has a monthly and a yearly price");
  const assigned = await dmarc.assignSubscription({ organizationId, priceId: monthly.id });
  expect(await raw("POST", "/v1/partners/subscriptions/assign", { organizationId, priceId: monthly.id })).toBe(409);
  const moved = await dmarc.changeSubscriptionPrice(assigned.id, yearly.id);
  await dmarc.renewSubscription(moved.id);
  await dmarc.listSubscriptions(organizationId);

  await dmarc.inviteUser({
    organizationId,
    permissions: { users: [{ email: "admin@contract.example" }], organization: { role: "admin" } },
  });
  const user = await dmarc.getUser(organizationId, "admin@contract.example");
  if (!user) throw new Error("the invited user cannot be read back");
  await dmarc.getUser(organizationId, user.id);
  await dmarc.createMagicLink({ userId: user.id, organizationId });
  await dmarc.revokeOrganizationAccess({ organizationId, userIds: [user.id] });

  // Three domains added, one group added and renamed, an admin invited and revoked, a plan assigned, moved and renewed.
  expect(await dmarc.countAuditLogEntries(organizationId, ["DOMAINS", "DOMAIN_GROUPS"], start)).toBe(5);
  expect(await dmarc.countAuditLogEntries(organizationId, ["USER_MANAGEMENT", "BILLING"], start)).toBe(5);
  expect(await dmarc.countAuditLogEntries(organizationId, ["ALERTING"], start)).toBe(0);
  expect(await dmarc.countAuditLogEntries(organizationId, ["DOMAINS"], new Date(Date.now() + 60_000))).toBe(0);
  expect(
    await raw(
      "GET",
      `/v1/audit-log?organizationId=${organizationId}&actionCategories=DOMAINS&actionCategories=BILLING`,
    ),
  ).toBe(200);

  await dmarc.regenerateWebhookSecret(webhook.objectId);
  await dmarc.deleteWebhook(webhook.objectId);
  for (const domain of ["contract.example", "one.contract.example", "two.contract.example"]) {
    await dmarc.deleteDomain(organizationId, domain);
  }
  await dmarc.deleteDomainGroup(organizationId, group.id);
  await dmarc.cancelSubscription(moved.id);
  await dmarc.deleteOrganization(organizationId);

  // Refusals: a gone organisation's children, a missing object, bad input, bad credentials.
  expect(await raw("GET", `/v1/domains?organizationId=${organizationId}`)).toBe(403);
  expect(await raw("GET", `/v1/partners/subscriptions?organizationId=${organizationId}`)).toBe(403);
  expect(await raw("GET", `/v1/organizations/${organizationId}`)).toBe(404);
  expect(await raw("GET", `/v1/audit-log?organizationId=${organizationId}`)).toBe(403);
  expect(await raw("GET", "/v1/webhooks/wh_missing")).toBe(404);
  expect(await raw("POST", "/v1/organizations", { name: "" })).toBe(400);
  expect(await raw("POST", "/v1/webhooks", { name: "x" })).toBe(422);
  expect(await raw("GET", "/v1/organizations", undefined, "not-a-token")).toBe(401);
  const token = await fetch(`${emulator.url}/auth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ client_id: partner().clientId, client_secret: "wrong" }).toString(),
  });
  expect(token.status).toBe(400);
}

beforeAll(async () => {
  emulator = await startEmulator({ port: 0, profile: "published", requestLogFile: requestLog });
  dmarc = createClient({ baseUrl: emulator.url, clientId: partner().clientId, clientSecret: partner().clientSecret });
  try {
    await exerciseEveryRoute();
  } finally {
    // The emulator writes its request log through a buffered stream: the log is whole once it is closed.
    await closeClients();
    await emulator.close();
  }
});

function logged(): Logged[] {
  return readFileSync(requestLog, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Logged);
}

describe("the emulator's published profile against the OpenAPI description", () => {
  it("answers every call on a route the description publishes, with a status it lists", () => {
    const answers = logged().filter(
      (entry) => !EMULATOR_ONLY.some((only) => only.test(`${entry.method} ${entry.path}`)),
    );
    expect(answers.length).toBeGreaterThan(40);
    const outside = answers.flatMap((entry) => {
      const route = publishedRouteOf(entry.method, entry.path);
      if (!route) return [`${entry.method} ${entry.path}: no such route in the description`];
      return entry.status !== null && entry.status in route.statuses
        ? []
        : [
            `${entry.method} ${entry.path}: status ${entry.status} is not among ${Object.keys(route.statuses).join(", ")}`,
          ];
    });
    expect(outside).toEqual([]);
  });

  it("sends bodies of the described shapes, and none where it describes none", () => {
    const mismatches = logged().flatMap((entry) => {
      const route = publishedRouteOf(entry.method, entry.path);
      if (!route || entry.status === null) return [];
      const schema = route.statuses[entry.status];
      if (schema === undefined) {
        return entry.response === null ? [] : [`${entry.method} ${entry.path} ${entry.status}: a body where none is`];
      }
      const checked = schema.safeParse(entry.response);
      return checked.success
        ? []
        : [
            `${entry.method} ${entry.path} ${entry.status}: ${checked.error.issues.map((issue) => `${issue.path.join(".")} ${issue.message}`).join("; ")}`,
          ];
    });
    expect(mismatches).toEqual([]);
  });

  it("is sent request bodies of the described shapes by the client", () => {
    const accepted = logged().filter((entry) => {
      const route = publishedRouteOf(entry.method, entry.path);
      return route?.request !== undefined && entry.status !== null && entry.status < 300;
    });
    expect(accepted.length).toBeGreaterThanOrEqual(3);
    const mismatches = accepted.flatMap((entry) => {
      const checked = publishedRouteOf(entry.method, entry.path)?.request?.safeParse(entry.body);
      return checked?.success
        ? []
        : [
            `${entry.method} ${entry.path}: ${checked?.error.issues.map((issue) => `${issue.path.join(".")} ${issue.message}`).join("; ")}`,
          ];
    });
    expect(mismatches).toEqual([]);
  });

  it("covers every route the project calls", () => {
    const seen = new Set(
      logged().flatMap((entry) => {
        const route = publishedRouteOf(entry.method, entry.path);
        return route ? [`${route.method} ${route.path}`] : [];
      }),
    );
    const missing = PUBLISHED_ROUTES.map((route) => `${route.method} ${route.path}`).filter((name) => !seen.has(name));
    expect(missing).toEqual([]);
  });
});
