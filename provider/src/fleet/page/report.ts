import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Inventory } from "../../inventory/inventory";
import { clientFrom, type ProviderSettings } from "../../runtime/config";
import { type KeptReport, lastReport } from "../lastRun";
import { type FleetScan, pulumiCommand, scanFleet } from "../plan/scan";
import { fleetPage, type PageInputs } from "./fleetData";
import { fleetPageHtml } from "./html";
import { keepReads, keptReads } from "./keptReads";
import type { FleetPage } from "./model";
import { pageDays, readServiceFacts } from "./serviceReads";

// `dmarc-fleet report`: the fleet's page from a scan of its shards, the
// last kept reports, and the service's reads, with the requests counted;
// what it read is kept for the next run, which reads only the new days.

/** The file the page is written to in `--html DIR`: what an artifact browser opens first. */
export const PAGE_FILE = "index.html";

/** One line per request the client sends: `POST /v1/domains/overview -> 200 attempt 1 12ms`. */
const ATTEMPT_LINE = / -> .* attempt \d+ \d+ms$/;

export interface PageOptions {
  /** The last day of pass rates on the page, `YYYY-MM-DD`; default yesterday, the last day with whole reports. Days up to it are kept as whole. */
  until?: string;
  now?: Date;
}

/** What the page is made from: the fleet's shards, the service asked with the fleet's settings, and the inventory. */
export interface PageSources {
  scan: FleetScan;
  /** Shard stacks read at once. */
  concurrency: number;
  settings: ProviderSettings;
  inventory: Inventory;
}

function lastRunsOf(stateDir: string, fleet: string): PageInputs["lastRuns"] {
  const kept: [string, KeptReport | undefined][] = [
    ["up", lastReport(stateDir, fleet, "up")],
    ["drift", lastReport(stateDir, fleet, "drift")],
    ["refresh", lastReport(stateDir, fleet, "refresh")],
  ];
  return Object.fromEntries(kept.filter(([, run]) => run !== undefined));
}

function lastDay(options: PageOptions, now: Date): Date {
  return options.until ? new Date(`${options.until}T00:00:00.000Z`) : new Date(now.getTime() - 86_400_000);
}

/** The page's data: the shards scanned, the kept reports read, the service asked at its pace. */
export async function buildFleetPage(sources: PageSources, pageOptions: PageOptions = {}): Promise<FleetPage> {
  const { scan, inventory } = sources;
  const { fleet } = scan;
  const { stateDir } = scan.backend;
  const now = pageOptions.now ?? new Date();
  const states = await scanFleet(scan, await pulumiCommand(scan.backend.env), sources.concurrency, true);
  let requests = 0;
  const client = clientFrom(sources.settings, {
    log: (line) => {
      if (ATTEMPT_LINE.test(line)) requests++;
    },
  });
  const deployed = new Map([...states.values()].flatMap((state) => Object.entries(state.holdings)));
  const tenants = inventory.tenants.filter((tenant) => deployed.get(tenant.key)?.organizationId);
  const organizations = [...new Set(tenants.map((tenant) => deployed.get(tenant.key)?.organizationId as string))];
  const domains = [...new Set(tenants.flatMap((tenant) => tenant.domains.map((domain) => domain.name)))];
  const days = pageDays(lastDay(pageOptions, now));
  const kept = keptReads(stateDir, fleet);
  const facts = await readServiceFacts(client, organizations, domains, days, kept.rates);
  const lastRuns = lastRunsOf(stateDir, fleet);
  const page = fleetPage({ fleet, inventory, states, lastRuns, facts, requests, now, earlierRuns: kept.runs });
  keepReads(stateDir, fleet, { rates: facts.rates, runs: page.trend });
  return page;
}

/** Writes the page into `dir`; answers the file's path. */
export function writeFleetPage(dir: string, page: FleetPage): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, PAGE_FILE);
  writeFileSync(file, fleetPageHtml(page));
  return file;
}
