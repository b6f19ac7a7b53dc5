import { type RunningEmulator, startEmulator } from "dmarc-partner-emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  closeClients,
  createClient,
  type DmarcClient,
  DmarcConfigError,
  OrganizationGoneError,
} from "../../provider/src/client";

// The report reads through the client against the emulator: batching across
// organisations, paging, the figures as numbers, and what each costs in requests.

let emulator: RunningEmulator;
let dmarc: DmarcClient;
const organizations: { id: string; domains: string[] }[] = [];

interface ReportDay {
  date: string;
  messages: number;
  spfPass: number;
  dkimPass: number;
  byReportType: Record<string, number>;
}

async function control<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${emulator.url}/_emulator${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new Error(`control ${method} ${path}: ${response.status} ${await response.text()}`);
  const text = await response.text();
  return (text === "" ? undefined : JSON.parse(text)) as T;
}

/** API requests the emulator counted on a route while `run` ran. */
async function requestsOf<T>(route: string, run: () => Promise<T>): Promise<{ result: T; requests: number }> {
  const count = async () => (await control<{ byRoute: Record<string, number> }>("GET", "/stats")).byRoute[route] ?? 0;
  const before = await count();
  const result = await run();
  return { result, requests: (await count()) - before };
}

async function organizationOf(name: string, domains: string[], priceId: string) {
  const { id } = await dmarc.createOrganization({ name });
  await dmarc.assignSubscription({ organizationId: id, priceId });
  const group = await dmarc.createDomainGroup({ organizationId: id, name: "all" });
  await Promise.all(
    domains.map((domain) => dmarc.createDomain({ organizationId: id, domain, type: "sending", groupId: group.id })),
  );
  organizations.push({ id, domains });
}

const days = (domain: string) => control<{ days: ReportDay[] }>("GET", `/reports/${domain}`).then((view) => view.days);
const rate = (part: number, whole: number) => Math.round((part / whole) * 10_000) / 100;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0, retryScale: 0.001 });
  const partner = emulator.partners[0];
  if (!partner) throw new Error("the emulator has no partner");
  dmarc = createClient({
    baseUrl: emulator.url,
    clientId: partner.clientId,
    clientSecret: partner.clientSecret,
    domainBatchWindowMs: 20,
  });
  const business = (await dmarc.listPlans()).find((plan) => plan.name === "Business");
  const priceId = business?.prices[0]?.id ?? "";
  // 120 domains over three organisations: more than one request's worth of domains.
  for (const letter of ["a", "b", "c"]) {
    const domains = Array.from({ length: 40 }, (_, index) => `d${index}.${letter}.example`);
    await organizationOf(`org ${letter}`, domains, priceId);
  }
  await control("POST", "/clock", { advanceDays: 3 });
}, 60_000);

afterAll(async () => {
  await closeClients();
  await emulator.close();
});

function range(reportDays: ReportDay[]) {
  return { from: reportDays[0]?.date ?? "", to: reportDays.at(-1)?.date ?? "" };
}

describe("authPassRates", () => {
  it("reads every domain of every organisation in batches of 100, with the figures as numbers", async () => {
    const all = organizations.flatMap((organization) => organization.domains);
    const sample = await days("d7.b.example");
    const { result, requests } = await requestsOf("POST /v1/dmarc/rua/auth-pass-rates", () =>
      dmarc.authPassRates({ domains: [...all, "unknown.example", "d0.a.example"], ...range(sample) }),
    );
    expect(requests).toBe(2);
    expect(result.map((row) => row.domain).sort()).toEqual([...all].sort());
    const messages = sample.reduce((sum, day) => sum + day.messages, 0);
    expect(result.find((row) => row.domain === "d7.b.example")).toEqual({
      domain: "d7.b.example",
      messages,
      spfPassRate: rate(
        sample.reduce((sum, day) => sum + day.spfPass, 0),
        messages,
      ),
      dkimPassRate: rate(
        sample.reduce((sum, day) => sum + day.dkimPass, 0),
        messages,
      ),
    });
  });

  it("counts only the report types asked for, and the days asked for", async () => {
    const sample = await days("d3.c.example");
    const lastDay = sample.at(-1);
    const [forwarded] = await dmarc.authPassRates({
      domains: ["d3.c.example"],
      from: lastDay?.date ?? "",
      to: lastDay?.date ?? "",
      reportTypes: ["forwarded"],
    });
    expect(forwarded?.messages).toBe(lastDay?.byReportType.forwarded);
  });

  it("sends nothing for no domains, and refuses a range that is not whole days before sending", async () => {
    const { result, requests } = await requestsOf("POST /v1/dmarc/rua/auth-pass-rates", async () => {
      const none = await dmarc.authPassRates({ domains: [], from: "2026-01-01", to: "2026-01-02" });
      const refusals = await Promise.all(
        [
          { from: "2026-01-01T00:00:00Z", to: "2026-01-02" },
          { from: "2026-02-30", to: "2026-03-01" },
          { from: "2026-01-02", to: "2026-01-01" },
        ].map((bad) => dmarc.authPassRates({ domains: ["d0.a.example"], ...bad }).catch((error: unknown) => error)),
      );
      return { none, refusals };
    });
    expect(requests).toBe(0);
    expect(result.none).toEqual([]);
    for (const refusal of result.refusals) expect(refusal).toBeInstanceOf(DmarcConfigError);
  });
});

describe("volumeHistory", () => {
  it("follows every page and names the grouped fields as asked", async () => {
    const domains = organizations.flatMap((organization) => organization.domains).slice(0, 100);
    const sample = await days("d0.a.example");
    const expected = await Promise.all(domains.map(days)).then((all) =>
      all.flat().reduce((sum, day) => sum + Object.keys(day.byReportType).length, 0),
    );
    const { result, requests } = await requestsOf("POST /v1/dmarc/rua/volume-history", () =>
      dmarc.volumeHistory({ domains, ...range(sample), period: "day", groupByFields: ["report_type"] }),
    );
    // A row per domain, day and report type: more than one page of 100.
    expect(result).toHaveLength(expected);
    expect(requests).toBe(Math.ceil(expected / 100));
    for (const row of result) expect(row.fields).toEqual({ report_type: row.reportType });
    const firstDay = result.filter(
      (row) => row.domain === "d0.a.example" && row.startDate.startsWith(sample[0]?.date ?? "-"),
    );
    expect(Object.fromEntries(firstDay.map((row) => [row.reportType, row.messages]))).toEqual(sample[0]?.byReportType);
  });
});

describe("domainsOverview", () => {
  it("reads every domain of the organisation, with the policy its zone serves", async () => {
    const [first] = organizations;
    const domain = first?.domains[5] ?? "";
    await control("PUT", "/dns/records", {
      name: `_dmarc.${domain}`,
      type: "TXT",
      values: [`v=DMARC1; p=quarantine; pct=25; rua=mailto:${first?.id}@rua.dmarc-emulator.test`],
    });
    const sample = await days(domain);
    const { result, requests } = await requestsOf("POST /v1/domains/overview", () =>
      dmarc.domainsOverview(first?.id ?? "", range(sample)),
    );
    expect(requests).toBe(1);
    expect(result.map((view) => view.domain).sort()).toEqual([...(first?.domains ?? [])].sort());
    const views = new Map(result.map((view) => [view.domain, view]));
    expect(views.get(domain)).toMatchObject({ policy: "quarantine", dmarc: "valid" });
    expect(views.get(first?.domains[6] ?? "")).toMatchObject({ policy: "missing", dmarc: "no-record" });
    expect(views.get(domain)?.volume).toBe(sample.reduce((sum, day) => sum + day.messages, 0));
  });

  it("reports an organisation that is not the partner's as gone", async () => {
    const answer = dmarc.domainsOverview("org_000000000000000000000000", { from: "2026-01-01", to: "2026-01-02" });
    await expect(answer).rejects.toBeInstanceOf(OrganizationGoneError);
  });
});
