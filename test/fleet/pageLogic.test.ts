import type { PageDomain, PageTenant, PassRateSeries, StageRun } from "pulumi-dmarc-partner/fleet";
import { describe, expect, it } from "vitest";
import {
  chartWords,
  floorOf,
  matches,
  reportedDays,
  shownText,
  stageRank,
  stageText,
  subscriptionText,
  type TenantFilter,
  trendStages,
  trendWords,
  verifiedCount,
} from "../../provider/src/fleet/page/browser/pageLogic";
import { pageScript } from "../../provider/src/fleet/page/script";

// The fleet page's script decides in plain functions what the browser test
// sees drawn: which tenants a filter keeps, the order of policy stages, a
// chart's scale and the words of its cells. Here each is called directly,
// with the cases a fleet of 20 in chromium does not reach; and the one
// script the page inlines is both modules as `tsc -b` emitted them.

function series(days: ([dkim: number, spf: number, messages: number] | null)[], unread: string[] = []): PassRateSeries {
  return {
    dkim: days.map((day) => day?.[0] ?? null),
    spf: days.map((day) => day?.[1] ?? null),
    messages: days.map((day) => day?.[2] ?? null),
    unread,
  };
}

function domain(name: string, fields: Partial<PageDomain> = {}): PageDomain {
  return {
    name,
    publishing: { by: "none" },
    published: false,
    verified: true,
    stage: "none",
    stageFrom: "observed",
    observed: "none",
    onService: true,
    spf: "valid",
    dkim: "valid",
    dmarc: "valid",
    passRates: series([]),
    ...fields,
  };
}

function pageTenant(key: string, fields: Partial<PageTenant> = {}): PageTenant {
  return {
    key,
    name: `Tenant ${key}`,
    shard: "fleet-001",
    organizationId: `org_${key}`,
    plan: "Starter",
    subscription: "active",
    subscriptionHeld: true,
    status: { word: "verified", source: "service" },
    deployed: true,
    attention: [],
    drift: [],
    domains: [domain(`${key}.example`)],
    ...fields,
  };
}

const NO_FILTER: TenantFilter = { attention: false, status: "", stage: "", shard: "", text: "" };

describe("the page's filter", () => {
  const drifted = pageTenant("acme", {
    shard: "fleet-002",
    attention: ["drifted"],
    status: { word: "drifted", source: "state" },
    domains: [domain("mail.acme.example", { stage: "quarantine-25" })],
  });
  const fine = pageTenant("globex");

  it("keeps every tenant when it asks for nothing", () => {
    expect([drifted, fine].filter((tenant) => matches(tenant, NO_FILTER))).toEqual([drifted, fine]);
  });

  it("keeps only what every field asks for", () => {
    const kept = (filter: Partial<TenantFilter>) =>
      [drifted, fine].filter((tenant) => matches(tenant, { ...NO_FILTER, ...filter })).map((tenant) => tenant.key);
    expect(kept({ attention: true })).toEqual(["acme"]);
    expect(kept({ status: "verified" })).toEqual(["globex"]);
    expect(kept({ shard: "fleet-002" })).toEqual(["acme"]);
    expect(kept({ stage: "quarantine-25" })).toEqual(["acme"]);
    expect(kept({ attention: true, status: "verified" })).toEqual([]);
  });

  it("searches keys, names, organisation ids and domain names, in lower case", () => {
    const kept = (text: string) =>
      [drifted, fine].filter((tenant) => matches(tenant, { ...NO_FILTER, text })).map((tenant) => tenant.key);
    expect(kept("mail.acme")).toEqual(["acme"]);
    expect(kept("tenant globex")).toEqual(["globex"]);
    expect(kept("org_")).toEqual(["acme", "globex"]);
    expect(kept("initech")).toEqual([]);
  });

  it("says how many tenants show, and how many rows are still to be drawn", () => {
    expect(shownText(3, 60, 1000)).toBe("3 of 1000 tenants shown (drawing 940 more)");
    expect(shownText(20, 20, 20)).toBe("20 of 20 tenants shown");
  });
});

describe("the policy stages' order", () => {
  it("ranks a stage by its kind, then its percentage, a whole stage after its ramp's steps", () => {
    expect(stageRank("none")).toEqual([1, 100]);
    expect(stageRank("quarantine-25")).toEqual([2, 25]);
    expect(stageRank("reject")).toEqual([3, 100]);
    expect(stageRank("missing")).toEqual([0, 0]);
  });

  it("lists every stage the runs counted, furthest from reject first", () => {
    const runs: StageRun[] = [
      { at: "2026-11-24T02:00:00.000Z", stages: { reject: 1, none: 4, "quarantine-50": 2 } },
      { at: "2026-11-25T02:00:00.000Z", stages: { quarantine: 3, "quarantine-50": 1, missing: 1, reject: 3 } },
    ];
    const stages = trendStages(runs);
    expect(stages).toEqual(["missing", "none", "quarantine-50", "quarantine", "reject"]);
    expect(trendWords(runs, stages)).toBe(
      "2 run(s) from 2026-11-24 (missing 0, none 4, quarantine-50 2, quarantine 0, reject 1)" +
        " to 2026-11-25 (missing 1, none 0, quarantine-50 1, quarantine 3, reject 3)",
    );
  });
});

describe("a domain's pass-rate chart", () => {
  it("draws only the days with reports, on a scale from a multiple of 10 under the lowest rate", () => {
    const rates = series([null, [99, 97.5, 120], null, [98, 91, 80]]);
    const reported = reportedDays(rates);
    expect(reported).toEqual([1, 3]);
    expect(floorOf(rates, reported)).toBe(90);
    expect(chartWords(rates, reported, ["d1", "d2", "d3", "d4"])).toBe(
      "2 day(s) of reports, scale 90–100%; last d4: DKIM 98%, SPF 91%, 80 messages",
    );
  });

  it("keeps a rate of 100 and a rate of 0 on the chart", () => {
    const perfect = series([[100, 100, 5]]);
    expect(floorOf(perfect, reportedDays(perfect))).toBe(90);
    const failing = series([[0, 40, 5]]);
    expect(floorOf(failing, reportedDays(failing))).toBe(0);
  });

  it("says when there are no reports, and which days could not be read", () => {
    const unread = series([null, null], ["2026-11-20"]);
    expect(chartWords(unread, reportedDays(unread), ["d1", "d2"])).toBe("no reports; 1 day(s) unknown (read failed)");
  });
});

describe("a tenant's cells", () => {
  it("counts verified domains, and says how many are unknown", () => {
    const domains = [domain("a.example"), domain("b.example", { verified: false })];
    expect(verifiedCount(pageTenant("acme", { domains }))).toBe("1 of 2");
    const unknown = [...domains, domain("c.example", { verified: "unknown" })];
    expect(verifiedCount(pageTenant("acme", { domains: unknown }))).toBe("1 of 3 (1 unknown)");
  });

  it("tells the inventory's subscription from the one the fleet's state holds", () => {
    expect(subscriptionText(pageTenant("acme"))).toBe("subscription active (inventory); held in the fleet's state");
    expect(subscriptionText(pageTenant("acme", { subscriptionHeld: false }))).toBe(
      "subscription active (inventory); none held in the fleet's state",
    );
    expect(subscriptionText(pageTenant("acme", { subscription: "none", subscriptionHeld: false }))).toBe(
      "subscription none (inventory)",
    );
  });

  it("names a ramp's stage, its target and what the service observes", () => {
    expect(stageText(domain("a.example", { stage: "reject" }))).toBe("reject (observed by the service)");
    expect(stageText(domain("a.example", { stage: "unknown" }))).toBe("unknown");
    const ramped = domain("a.example", { stage: "quarantine-25", stageFrom: "inventory", target: "reject" });
    expect(stageText(ramped)).toBe("quarantine-25 \u2192 target reject (inventory); observed none (service)");
  });
});

describe("the script the page inlines", () => {
  it("is the logic and the drawing as one module, importing nothing", () => {
    const script = pageScript();
    expect(script).not.toMatch(/^import /m);
    expect(script).toContain("export function matches(");
    expect(script.trimEnd().endsWith("start();")).toBe(true);
    expect(script).not.toContain("</script");
  });
});
