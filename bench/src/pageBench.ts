import { statSync } from "node:fs";
import { join } from "node:path";
import { type Inventory, parseInventory } from "pulumi-dmarc-partner";
import type { DomainOverview } from "pulumi-dmarc-partner/api";
import { type DmarcClient, DOMAINS_PER_REQUEST } from "pulumi-dmarc-partner/client";
import {
  type FleetPage,
  type FleetReport,
  fleetPage,
  pageDays,
  readServiceFacts,
  type ShardState,
  writeFleetPage,
} from "pulumi-dmarc-partner/fleet";
import { stringify } from "yaml";
import { chromiumUnavailable, launchBrowser, openFile, ROWS_DRAWN } from "./browser";

// `npm run bench -- --page`: the fleet page for N tenants (default 1,000),
// its size and the time headless chromium takes to its load event, with
// every tenant's domains, 30 days of pass rates each, a drifted tenant in
// every fifty and a failed shard. The page's data is made by the same code
// as `report`'s, from a generated inventory, shard states and service
// answers: the page is what is measured, not a fleet's deployment. The
// service's reads run twice, a day apart, the second with what the first
// kept: the requests of a first run and of the next day's, counted as the
// client sends them (an overview a request, 100 domains a pass-rate
// request), and a stage trend of two runs.

/** Ticks "needs attention only" and forces the layout the filter causes; the time it took. A string: no DOM types here. */
const FILTER_TIMING = `(() => {
  const start = performance.now();
  document.getElementById("attention").click();
  void document.body.offsetHeight;
  return performance.now() - start;
})()`;

/** When the page's last tenant row was drawn, from navigation start. */
const ROWS_DRAWN_AT = `performance.getEntriesByName("fleet-rows-drawn")[0].startTime`;

/** Load runs measured; the median is reported, so one slow start of the browser does not decide. */
const LOADS = 5;

export interface PageBenchHooks {
  outDir: string;
  say: (message: string) => void;
}

export interface PageBenchResult {
  tenants: number;
  domains: number;
  bytes: number;
  loadEventMs: number[];
  medianLoadEventMs: number;
  /** Milliseconds from navigation start until every tenant's row was drawn (the first screenful is before the load event). */
  rowsDrawnMs: number[];
  /** Milliseconds to show only the tenants that need attention, layout included, in the first load. */
  filterMs: number;
  /** Service requests of a first run, with nothing kept. */
  firstRunRequests: number;
  /** Service requests of the next day's run, with what the first kept: one overview per organisation, one pass-rate request per 100 domains. */
  nextDayRequests: number;
  /** Runs the page's stage trend draws. */
  trendRuns: number;
}

function benchInventory(tenants: number, domains: number): Inventory {
  const entries = Array.from({ length: tenants }, (_, index) => {
    const key = `tenant-${String(index + 1).padStart(4, "0")}`;
    return {
      name: `Tenant ${index + 1}`,
      key,
      group: "Main",
      plan: "Starter",
      domains: Array.from({ length: domains }, (_, n) => ({ name: `d${n}.${key}.example` })),
    };
  });
  return parseInventory(stringify({ tenants: entries }), "tenants.yaml");
}

/** Shards of 50 tenants as the backend would hold them, the first one's last up failed. */
function benchStates(inventory: Inventory): Map<number, ShardState> {
  const states = new Map<number, ShardState>();
  inventory.tenants.forEach((tenant, index) => {
    const number = Math.floor(index / SHARD_SIZE) + 1;
    const name = `bench-${String(number).padStart(3, "0")}`;
    const state = states.get(number) ?? { name, tenants: [], holdings: {} };
    state.tenants.push(tenant.key);
    state.holdings[tenant.key] = { urns: [], objects: [], organizationId: `org_${index}`, onDelete: "delete" };
    if (index % DRIFT_EVERY === 0) state.driftMark = `found by drift at ${new Date(0).toISOString()}`;
    if (number === 1) state.lastUp = { outcome: "failed", at: new Date(0).toISOString() };
    states.set(number, state);
  });
  return states;
}

const SHARD_SIZE = 50;
const DRIFT_EVERY = 50;
const POLICIES = ["none", "none", "quarantine", "reject"] as const;

/** The service's two reads as the bench's fleet has them, with the requests the client would send for them. */
interface BenchService extends Pick<DmarcClient, "domainsOverview" | "authPassRates"> {
  requests: number;
}

/** What the service would answer: every domain verified, its policy by turn (a step further each day), a day's reports. */
function benchService(inventory: Inventory): BenchService {
  const tenantOf = new Map(inventory.tenants.map((tenant, index) => [`org_${index}`, { tenant, index }]));
  const dayNumber = (day: string) => Math.floor(Date.parse(day) / 86_400_000);
  const service: BenchService = {
    requests: 0,
    async domainsOverview(organizationId, range) {
      service.requests += 1;
      const { tenant, index } = tenantOf.get(organizationId) as { tenant: Inventory["tenants"][number]; index: number };
      const today = dayNumber(range.to);
      return tenant.domains.map((domain, n): DomainOverview => {
        const policy = POLICIES[(index + n + today) % POLICIES.length] as DomainOverview["policy"];
        return { domain: domain.name, policy, spf: "valid", dkim: "valid", dmarc: "valid", domain_verified: true };
      });
    },
    async authPassRates(query) {
      service.requests += Math.ceil(query.domains.length / DOMAINS_PER_REQUEST);
      const day = dayNumber(query.from);
      return query.domains.map((domain, n) => ({
        domain,
        dkimPassRate: 97 + ((n + day) % 30) / 10,
        spfPassRate: 95 + ((n + day) % 50) / 10,
        messages: 180 + (day % 30),
      }));
    },
  };
  return service;
}

/** A kept drift report that looked at every shard and found one domain changed in each drift-marked tenant. */
function driftReport(inventory: Inventory, states: Map<number, ShardState>): FleetReport {
  const tenants = inventory.tenants
    .filter((_, index) => index % DRIFT_EVERY === 0)
    .map((tenant) => ({
      key: tenant.key,
      differs: [{ type: "Domain", name: tenant.domains[0]?.name ?? tenant.key }],
      missing: [],
    }));
  const results = [...states.values()].map((state) => ({ shard: state.name, status: "done" }));
  return { tenants, results } as unknown as FleetReport;
}

/** The service's requests of the first run and of the next day's, which starts from what the first kept. */
interface BenchPage {
  page: FleetPage;
  firstRunRequests: number;
  nextDayRequests: number;
}

/** The bench's page: as `report` would make it for this generated fleet the day after a first run. */
async function benchPage(tenants: number, domains: number, now: Date): Promise<BenchPage> {
  const inventory = benchInventory(tenants, domains);
  const states = benchStates(inventory);
  const service = benchService(inventory);
  const organizations = inventory.tenants.map((_, index) => `org_${index}`);
  const names = inventory.tenants.flatMap((tenant) => tenant.domains.map((domain) => domain.name));
  const at = now.toISOString();
  const failed = { shard: "bench-001", status: "failed", error: "503 Service Unavailable" };
  const lastRuns = {
    up: { at, report: { results: [failed] } as unknown as FleetReport },
    drift: { at, report: driftReport(inventory, states) },
  };
  const yesterday = new Date(now.getTime() - 86_400_000);
  const dayBefore = new Date(now.getTime() - 2 * 86_400_000);
  const first = await readServiceFacts(service, organizations, names, pageDays(dayBefore));
  const firstPage = fleetPage({
    fleet: "bench",
    inventory,
    states,
    lastRuns,
    facts: first,
    requests: service.requests,
    now: yesterday,
  });
  const firstRunRequests = service.requests;
  const facts = await readServiceFacts(service, organizations, names, pageDays(yesterday), first.rates);
  const nextDayRequests = service.requests - firstRunRequests;
  const inputs = { fleet: "bench", inventory, states, lastRuns, facts, requests: nextDayRequests, now };
  return { page: fleetPage({ ...inputs, earlierRuns: firstPage.trend }), firstRunRequests, nextDayRequests };
}

/** Writes the page, opens it `LOADS` times, and reports its size and load-event times. */
export async function pageBench(hooks: PageBenchHooks, tenants: number, domains: number): Promise<PageBenchResult> {
  const unavailable = await chromiumUnavailable();
  if (unavailable) throw new Error(`the page bench needs chromium: ${unavailable}`);
  const { page, firstRunRequests, nextDayRequests } = await benchPage(tenants, domains, new Date());
  const file = writeFleetPage(join(hooks.outDir, "page"), page);
  const bytes = statSync(file).size;
  hooks.say(`page bench: ${tenants} tenants, ${page.totals.domains} domains, ${(bytes / 1e6).toFixed(2)} MB`);
  hooks.say(`page bench: ${firstRunRequests} service requests on a first run, ${nextDayRequests} the next day`);
  const browser = await launchBrowser();
  const loadEventMs: number[] = [];
  let filterMs = Number.NaN;
  const rowsDrawnMs: number[] = [];
  try {
    for (let run = 0; run < LOADS; run++) {
      const opened = await openFile(browser, file, "", ROWS_DRAWN);
      rowsDrawnMs.push(Math.round((await opened.page.evaluate(ROWS_DRAWN_AT)) as number));
      if (opened.errors.length > 0) throw new Error(`the page logged errors: ${opened.errors.join("; ")}`);
      loadEventMs.push(Math.round(opened.loadEventMs));
      if (run === 0) filterMs = Math.round((await opened.page.evaluate(FILTER_TIMING)) as number);
      await opened.page.close();
    }
  } finally {
    await browser.close();
  }
  const sorted = [...loadEventMs].sort((a, b) => a - b);
  const medianLoadEventMs = sorted[Math.floor(sorted.length / 2)] as number;
  hooks.say(
    `page bench: load event after ${loadEventMs.join(", ")} ms (median ${medianLoadEventMs}); filter ${filterMs} ms`,
  );
  return {
    filterMs,
    rowsDrawnMs,
    tenants,
    domains: page.totals.domains,
    bytes,
    loadEventMs,
    medianLoadEventMs,
    firstRunRequests,
    nextDayRequests,
    trendRuns: page.trend.length,
  };
}

export function pageBenchMarkdown(result: PageBenchResult): string {
  return [
    `## Fleet page, ${result.tenants} tenants`,
    "",
    "| tenants | domains | page size | load event (median of 5) | load events | every row drawn | needs-attention filter | service requests, first run | the next day | stage trend |",
    "| ------- | ------- | --------- | ------------------------ | ----------- | --------------- | ---------------------- | --------------------------- | ------------ | ----------- |",
    `| ${result.tenants} | ${result.domains} | ${(result.bytes / 1e6).toFixed(2)} MB | ${result.medianLoadEventMs} ms | ${result.loadEventMs.join(", ")} ms | ${result.rowsDrawnMs.join(", ")} ms | ${result.filterMs} ms | ${result.firstRunRequests} | ${result.nextDayRequests} | ${result.trendRuns} runs |`,
    "",
  ].join("\n");
}
