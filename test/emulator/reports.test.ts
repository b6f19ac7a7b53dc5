import {
  DomainGroup,
  DomainsOverviewPage,
  Organization,
  PassRatesPage,
  type ReportType,
  VolumeHistoryPage,
} from "pulumi-dmarc-partner/api";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type ApiCaller, control, expectRefusal, startTestEmulator, type TestEmulator } from "./helpers";

// The aggregate-report routes, the overview, and their control-plane levers:
// the report clock and each domain's sender profile.

let t: TestEmulator;

beforeAll(async () => {
  t = await startTestEmulator();
});

afterAll(() => t.close());

beforeEach(async () => {
  expect((await control(t.emulator, "POST", "/reset")).status).toBe(204);
});

interface ReportDay {
  date: string;
  messages: number;
  spfPass: number;
  dkimPass: number;
  spfPassRate: number;
  dkimPassRate: number;
  byReportType: Partial<Record<ReportType, number>>;
}

interface Clock {
  today: string;
  offsetDays: number;
}

async function organizationWith(api: ApiCaller, domains: string[]): Promise<string> {
  const organizationId = (await api.call("POST", "/v1/organizations", { body: { name: "R" }, schema: Organization }))
    .body.id;
  const groupId = (
    await api.call("POST", "/v1/domain-groups", { body: { organizationId, name: "G" }, schema: DomainGroup })
  ).body.id;
  for (const domain of domains) {
    const created = await api.call("POST", "/v1/domains", {
      body: { organizationId, domain, type: "sending", groupId },
    });
    expect(created.status).toBe(201);
  }
  return organizationId;
}

async function advance(days: number): Promise<Clock> {
  const answer = await control<Clock>(t.emulator, "POST", "/clock", { advanceDays: days });
  expect(answer.status).toBe(200);
  return answer.body;
}

async function reportDays(domain: string): Promise<ReportDay[]> {
  const answer = await control<{ days: ReportDay[] }>(t.emulator, "GET", `/reports/${domain}`);
  expect(answer.status).toBe(200);
  return answer.body.days;
}

const sum = (days: ReportDay[], figure: (day: ReportDay) => number) =>
  days.reduce((total, day) => total + figure(day), 0);
const rate = (part: number, whole: number) => Math.round((part / whole) * 10_000) / 100;
const wholeDays = (from: string, to: string) => ({ from: `${from}T00:00:00.000Z`, to: `${to}T23:59:59.999Z` });

function passRateBody(domains: string[], range: { from: string; to: string }, reportTypes?: ReportType[]) {
  const types = reportTypes ?? ["dmarc-capable", "non-compliant", "threat-unknown", "forwarded"];
  return {
    domainsWithReportTypes: domains.map((domainName) => ({ domainName, reportTypes: types })),
    dateRange: range,
    filters: {},
  };
}

async function passRates(api: ApiCaller, body: Record<string, unknown>) {
  const answer = await api.call("POST", "/v1/dmarc/rua/auth-pass-rates", { body, schema: PassRatesPage });
  expect(answer.status).toBe(200);
  return answer.body;
}

describe("report days and the clock", () => {
  it("has no report day on the day a domain is added, and one more for every day the clock moves", async () => {
    await organizationWith(t.alpha, ["days.example"]);
    expect(await reportDays("days.example")).toEqual([]);
    const before = (await control<Clock>(t.emulator, "GET", "/clock")).body;
    const after = await advance(3);
    expect(after.offsetDays).toBe(before.offsetDays + 3);
    expect(Date.parse(after.today) - Date.parse(before.today)).toBe(3 * 86_400_000);
    const days = await reportDays("days.example");
    expect(days).toHaveLength(3);
    expect(days.at(-1)?.date).toBe(new Date(Date.parse(after.today) - 86_400_000).toISOString().slice(0, 10));
    for (const day of days) {
      // The default profile: about 200 messages, SPF about 97% and DKIM about 98% passing.
      expect(day.messages).toBeGreaterThanOrEqual(180);
      expect(day.messages).toBeLessThanOrEqual(220);
      expect(day.spfPassRate).toBeGreaterThan(95);
      expect(day.dkimPassRate).toBeGreaterThan(96);
      expect(Object.values(day.byReportType).reduce((total, count) => total + (count ?? 0), 0)).toBe(day.messages);
    }
  });

  it("varies the default by domain name, the same way every time", async () => {
    await organizationWith(t.alpha, ["one.example", "two.example"]);
    await advance(1);
    const [one] = await reportDays("one.example");
    const [two] = await reportDays("two.example");
    expect([one?.messages, one?.spfPass, one?.dkimPass]).not.toEqual([two?.messages, two?.spfPass, two?.dkimPass]);
    await control(t.emulator, "POST", "/reset");
    await organizationWith(t.alpha, ["one.example"]);
    await advance(1);
    expect(await reportDays("one.example")).toEqual([one]);
  });

  it("refuses a clock that does not move forward and a profile outside its bounds", async () => {
    expect((await control(t.emulator, "POST", "/clock", { advanceDays: 0 })).status).toBe(400);
    expect((await control(t.emulator, "POST", "/clock", { advanceDays: -1 })).status).toBe(400);
    await organizationWith(t.alpha, ["bounds.example"]);
    const profile = { messagesPerDay: 10, spfPassRate: 101, dkimPassRate: 50 };
    expect((await control(t.emulator, "PUT", "/reports/bounds.example", profile)).status).toBe(400);
    const shares = { ...profile, spfPassRate: 50, reportTypeShares: { forwarded: 60 } };
    expect((await control(t.emulator, "PUT", "/reports/bounds.example", shares)).status).toBe(400);
    expect((await control(t.emulator, "GET", "/reports/nowhere.example")).status).toBe(404);
  });
});

describe("sender profiles", () => {
  it("change the days from the current report day on and keep the earlier ones", async () => {
    await organizationWith(t.alpha, ["ramp.example"]);
    await advance(2);
    const earlier = await reportDays("ramp.example");
    const profile = { messagesPerDay: 1000, spfPassRate: 50, dkimPassRate: 60, reportTypeShares: { forwarded: 100 } };
    const set = await control<{ fromDay: string }>(t.emulator, "PUT", "/reports/ramp.example", profile);
    expect(set.status).toBe(200);
    await advance(2);
    const days = await reportDays("ramp.example");
    expect(days.slice(0, 2)).toEqual(earlier);
    expect(
      days.slice(2).map(({ date, messages, spfPass, dkimPass, byReportType }) => ({
        date,
        messages,
        spfPass,
        dkimPass,
        byReportType,
      })),
    ).toEqual([
      { date: set.body.fromDay, messages: 1000, spfPass: 500, dkimPass: 600, byReportType: { forwarded: 1000 } },
      { date: days[3]?.date, messages: 1000, spfPass: 500, dkimPass: 600, byReportType: { forwarded: 1000 } },
    ]);
  });
});

describe("POST /v1/dmarc/rua/auth-pass-rates", () => {
  it("sums the days in the range, weighting the rates by messages, with the count as a string", async () => {
    await organizationWith(t.alpha, ["rates.example"]);
    await advance(2);
    await control(t.emulator, "PUT", "/reports/rates.example", {
      messagesPerDay: 400,
      spfPassRate: 50,
      dkimPassRate: 75,
    });
    await advance(2);
    const days = await reportDays("rates.example");
    const range = wholeDays(days[0]?.date ?? "", days[3]?.date ?? "");
    const page = await passRates(t.alpha, passRateBody(["rates.example"], range));
    const messages = sum(days, (day) => day.messages);
    expect(page.data).toEqual([
      {
        policyDomain: "rates.example",
        dkimPassRate: rate(
          sum(days, (day) => day.dkimPass),
          messages,
        ),
        spfPassRate: rate(
          sum(days, (day) => day.spfPass),
          messages,
        ),
        count: String(messages),
      },
    ]);
    const lastTwo = await passRates(
      t.alpha,
      passRateBody(["rates.example"], wholeDays(days[2]?.date ?? "", days[3]?.date ?? "")),
    );
    expect(lastTwo.data).toEqual([{ policyDomain: "rates.example", dkimPassRate: 75, spfPassRate: 50, count: "800" }]);
  });

  it("counts only the report types asked for", async () => {
    await organizationWith(t.alpha, ["types.example"]);
    await advance(3);
    const days = await reportDays("types.example");
    const range = wholeDays(days[0]?.date ?? "", days[2]?.date ?? "");
    const page = await passRates(t.alpha, passRateBody(["types.example"], range, ["forwarded"]));
    expect(page.data.map((row) => row.count)).toEqual([String(sum(days, (day) => day.byReportType.forwarded ?? 0))]);
  });

  it("has no row for a domain without reports in the range, unknown to the partner, or another partner's", async () => {
    await organizationWith(t.alpha, ["mine.example"]);
    await organizationWith(t.beta, ["theirs.example"]);
    await advance(2);
    const [first] = await reportDays("mine.example");
    const dayBefore = new Date(Date.parse(first?.date ?? "") - 86_400_000).toISOString().slice(0, 10);
    expect((await passRates(t.alpha, passRateBody(["mine.example"], wholeDays(dayBefore, dayBefore)))).data).toEqual(
      [],
    );
    const all = wholeDays(dayBefore, first?.date ?? "");
    const page = await passRates(t.alpha, passRateBody(["mine.example", "theirs.example", "unknown.example"], all));
    expect(page.data.map((row) => row.policyDomain)).toEqual(["mine.example"]);
  });

  it("answers for domains of every organisation of the partner, in pages with all six meta fields", async () => {
    await organizationWith(t.alpha, ["a.example", "b.example"]);
    await organizationWith(t.alpha, ["c.example"]);
    const clock = await advance(1);
    const yesterday = new Date(Date.parse(clock.today) - 86_400_000).toISOString().slice(0, 10);
    const body = {
      ...passRateBody(["a.example", "b.example", "c.example"], wholeDays(yesterday, yesterday)),
      pageSize: 2,
    };
    const first = await passRates(t.alpha, body);
    expect(first.data.map((row) => row.policyDomain)).toEqual(["a.example", "b.example"]);
    expect(first.meta).toEqual({
      total: 3,
      limit: 2,
      page: 1,
      pageCount: 2,
      hasPreviousPage: false,
      hasNextPage: true,
    });
    const second = await passRates(t.alpha, { ...body, page: 2 });
    expect(second.data.map((row) => row.policyDomain)).toEqual(["c.example"]);
    expect(second.meta?.hasNextPage).toBe(false);
  });

  it("refuses a page size over 100, bad dates, unknown report types, a missing organisation-free body and filters", async () => {
    const range = wholeDays("2026-01-01", "2026-01-02");
    const call = (body: unknown) => t.alpha.call("POST", "/v1/dmarc/rua/auth-pass-rates", { body });
    expectRefusal(await call({ ...passRateBody(["x.example"], range), pageSize: 101 }), 422, "ValidationError", {
      fields: ["pageSize"],
    });
    expectRefusal(
      await call(passRateBody(["x.example"], { from: "2026-13-45", to: range.to })),
      422,
      "ValidationError",
      { fields: ["dateRange.from"] },
    );
    expectRefusal(await call(passRateBody(["x.example"], { from: range.to, to: range.from })), 422, "ValidationError", {
      fields: ["dateRange.to"],
    });
    expectRefusal(await call(passRateBody(["x.example"], range, ["spam" as ReportType])), 422, "ValidationError", {
      fields: ["domainsWithReportTypes.0.reportTypes.0"],
    });
    expectRefusal(await call({ dateRange: range, filters: {} }), 422, "ValidationError", {
      fields: ["domainsWithReportTypes"],
    });
    const filtered = {
      ...passRateBody(["x.example"], range),
      filters: { spf: { name: "spf", type: "eq", value: {} } },
    };
    expectRefusal(await call(filtered), 422, "ValidationError", { fields: ["filters"] });
  });
});

describe("POST /v1/dmarc/rua/volume-history", () => {
  async function volume(body: Record<string, unknown>) {
    const answer = await t.alpha.call("POST", "/v1/dmarc/rua/volume-history", { body, schema: VolumeHistoryPage });
    expect(answer.status).toBe(200);
    return answer.body;
  }

  it("splits by day and report type, and sums weeks and months cut to the range", async () => {
    await organizationWith(t.alpha, ["volume.example"]);
    await advance(9);
    const days = await reportDays("volume.example");
    const range = wholeDays(days[0]?.date ?? "", days[8]?.date ?? "");
    const byDay = await volume({ ...passRateBody(["volume.example"], range), period: "day" });
    const expected = days.flatMap((day) =>
      Object.entries(day.byReportType).map(([reportType, count]) => ({ date: day.date, reportType, count })),
    );
    expect(byDay.data.map(({ date, reportType, count }) => ({ date, reportType, count }))).toEqual(expected);
    expect(byDay.data[0]).toMatchObject({ startDate: range.from, endDate: `${days[0]?.date}T23:59:59.999Z` });
    const total = sum(days, (day) => day.messages);
    for (const period of ["week", "month"]) {
      const rows = (await volume({ ...passRateBody(["volume.example"], range), period })).data;
      expect(rows.reduce((all, row) => all + Number(row.count), 0)).toBe(total);
      // Nine days touch two or three weeks and one or two months; no period row starts before the range.
      expect(rows.every((row) => row.startDate >= range.from && row.endDate <= range.to)).toBe(true);
      expect(new Set(rows.map((row) => row.startDate)).size).toBeLessThan(9);
    }
  });

  it("refuses groupings the emulator does not keep", async () => {
    const body = {
      ...passRateBody(["x.example"], wholeDays("2026-01-01", "2026-01-01")),
      groupByFields: ["country_code"],
    };
    const answer = await t.alpha.call("POST", "/v1/dmarc/rua/volume-history", { body });
    expectRefusal(answer, 422, "ValidationError", { fields: ["groupByFields"] });
  });
});

describe("POST /v1/domains/overview", () => {
  const rua = (organizationId: string) => `mailto:${organizationId}@rua.dmarc-emulator.test`;

  async function overview(organizationId: string, extra: Record<string, unknown> = {}) {
    const clock = (await control<Clock>(t.emulator, "GET", "/clock")).body;
    const body = { organizationId, startDate: "2020-01-01", endDate: clock.today, pageSize: 100, ...extra };
    const answer = await t.alpha.call("POST", "/v1/domains/overview", { body, schema: DomainsOverviewPage });
    expect(answer.status).toBe(200);
    return answer.body.data;
  }

  async function publish(domain: string, value: string | undefined) {
    const name = `_dmarc.${domain}`;
    const answer =
      value === undefined
        ? await fetch(`${t.emulator.url}/_emulator/dns/records?name=${name}`, { method: "DELETE" })
        : await fetch(`${t.emulator.url}/_emulator/dns/records`, {
            method: "PUT",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ name, type: "TXT", values: [value] }),
          });
    expect(answer.status).toBe(204);
  }

  it("reads the policy from what the domain's zone serves now", async () => {
    const organizationId = await organizationWith(t.alpha, ["seen.example"]);
    const policyOf = async () => (await overview(organizationId)).map(({ policy, dmarc }) => ({ policy, dmarc }));
    expect(await policyOf()).toEqual([{ policy: "missing", dmarc: "no-record" }]);
    await publish("seen.example", `v=DMARC1; p=quarantine; pct=25; rua=${rua(organizationId)}; fo=1`);
    expect(await policyOf()).toEqual([{ policy: "quarantine", dmarc: "valid" }]);
    await publish("seen.example", `v=DMARC1; p=reject; rua=${rua(organizationId)}`);
    expect(await policyOf()).toEqual([{ policy: "reject", dmarc: "valid" }]);
    await publish("seen.example", "v=DMARC1; p=none; rua=mailto:someone@elsewhere.example");
    expect(await policyOf()).toEqual([{ policy: "none", dmarc: "warning" }]);
    await publish("seen.example", undefined);
    expect(await policyOf()).toEqual([{ policy: "missing", dmarc: "no-record" }]);
  });

  it("carries the report figures of the range, and no-record for a mechanism without reports", async () => {
    const organizationId = await organizationWith(t.alpha, ["figures.example"]);
    const [fresh] = await overview(organizationId);
    expect(fresh).toMatchObject({
      volume: 0,
      spf: "no-record",
      dkim: "no-record",
      bimi: "no-record",
      domain_verified: false,
    });
    await control(t.emulator, "PUT", "/reports/figures.example", {
      messagesPerDay: 100,
      spfPassRate: 80,
      dkimPassRate: 95,
    });
    await advance(2);
    const [seen] = await overview(organizationId);
    expect(seen).toMatchObject({
      domain: "figures.example",
      type: "sending",
      domain_group: "G",
      volume: 200,
      spf: "warning",
      dkim: "valid",
      spf_pass_rate: 80,
      dkim_pass_rate: 95,
      dmarc_compliance: {
        compliant: { value: 190, percentage: 95 },
        none_compliant: { value: 10, percentage: 5 },
        overall_compliance: 95,
      },
    });
  });

  it("pages one domain at a time unless asked, filters on the answer's fields, and refuses unknown fields", async () => {
    const organizationId = await organizationWith(t.alpha, ["f1.example", "f2.example", "f3.example"]);
    await publish("f2.example", `v=DMARC1; p=reject; rua=${rua(organizationId)}`);
    const clock = (await control<Clock>(t.emulator, "GET", "/clock")).body;
    const body = { organizationId, startDate: clock.today, endDate: clock.today };
    const firstPage = await t.alpha.call("POST", "/v1/domains/overview", { body, schema: DomainsOverviewPage });
    expect(firstPage.body.data).toHaveLength(1);
    expect(firstPage.body.meta).toMatchObject({ total: 3, hasNextPage: true });
    const rejecting = await overview(organizationId, { filters: { field: "policy", operator: "eq", value: "reject" } });
    expect(rejecting.map((view) => view.domain)).toEqual(["f2.example"]);
    const either = {
      operator: "OR",
      conditions: [
        { field: "domain", operator: "eq", value: "f1.example" },
        { field: "domain", operator: "ends_with", value: "3.example" },
      ],
    };
    expect((await overview(organizationId, { filters: [either] })).map((view) => view.domain)).toEqual([
      "f1.example",
      "f3.example",
    ]);
    const unknown = await t.alpha.call("POST", "/v1/domains/overview", {
      body: { ...body, filters: { field: "colour", operator: "eq", value: "red" } },
    });
    expectRefusal(unknown, 422, "ValidationError", { fields: ["filters"] });
  });

  it("answers only for the partner's organisations", async () => {
    const organizationId = await organizationWith(t.beta, ["other.example"]);
    const answer = await t.alpha.call("POST", "/v1/domains/overview", {
      body: { organizationId, startDate: "2026-01-01", endDate: "2026-01-02" },
    });
    expectRefusal(answer, 404, "ResourceNotFound");
  });
});
