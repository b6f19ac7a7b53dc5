import type { FleetPage, PageDomain, PageTenant, PassRateSeries, StageRun } from "../model";

// What the fleet page decides and says, apart from drawing it: which
// tenants a filter shows, how policy stages order, the words of a cell.
// Plain functions of the page's data, with no DOM, so the tests call them
// directly; the drawing module (pageScript.ts) puts their answers on the page.

/** What the filter form asks for; empty strings and false ask for nothing. */
export interface TenantFilter {
  attention: boolean;
  status: string;
  stage: string;
  shard: string;
  /** Lower case, trimmed. */
  text: string;
}

export function matches(tenant: PageTenant, filter: TenantFilter): boolean {
  if (filter.attention && tenant.attention.length === 0) return false;
  if (filter.status && tenant.status.word !== filter.status) return false;
  if (filter.shard && tenant.shard !== filter.shard) return false;
  if (filter.stage && !tenant.domains.some((domain) => domain.stage === filter.stage)) return false;
  if (!filter.text) return true;
  const haystack = [tenant.key, tenant.name, tenant.organizationId || ""].concat(
    tenant.domains.map((domain) => domain.name),
  );
  return haystack.some((value) => value.toLowerCase().indexOf(filter.text) !== -1);
}

/** The line under the filters: how many tenants show, and how many rows are still to come. */
export function shownText(shown: number, drawn: number, tenants: number): string {
  return `${shown} of ${tenants} tenants shown${drawn < tenants ? ` (drawing ${tenants - drawn} more)` : ""}`;
}

/** A stage's place on the way to reject: the kind first, then its percentage (quarantine-25 before quarantine). */
export function stageRank(stage: string): [kind: number, percent: number] {
  const match = /^(none|quarantine|reject)(?:-(\d+))?$/.exec(stage);
  if (!match) return [0, 0];
  return [["none", "quarantine", "reject"].indexOf(match[1] as string) + 1, match[2] ? Number(match[2]) : 100];
}

function byRank(a: string, b: string): number {
  const left = stageRank(a);
  const right = stageRank(b);
  return left[0] - right[0] || left[1] - right[1] || a.localeCompare(b);
}

/** Every stage any of the runs counted, furthest from reject first. */
export function trendStages(runs: StageRun[]): string[] {
  const all = new Set(runs.flatMap((run) => Object.keys(run.stages)));
  return [...all].sort(byRank);
}

/** The trend in words, first and last run: what the chart says to someone who cannot see it. */
export function trendWords(runs: StageRun[], stages: string[]): string {
  const first = runs[0] as StageRun;
  const last = runs[runs.length - 1] as StageRun;
  const counts = (run: StageRun) => stages.map((stage) => `${stage} ${run.stages[stage] || 0}`).join(", ");
  return `${runs.length} run(s) from ${first.at.slice(0, 10)} (${counts(first)}) to ${last.at.slice(0, 10)} (${counts(last)})`;
}

export function metaText(data: FleetPage): string {
  const runs = Object.keys(data.lastRuns).map((command) => `${command} ${data.lastRuns[command]}`);
  return `Fleet ${data.fleet}, made ${data.generatedAt} from ${data.reads.requests} service request(s); last runs: ${runs.join(", ") || "none kept"}.`;
}

export function verifiedCount(tenant: PageTenant): string {
  const known = tenant.domains.filter((domain) => domain.verified !== "unknown");
  const verified = tenant.domains.filter((domain) => domain.verified === true).length;
  const text = `${verified} of ${tenant.domains.length}`;
  return known.length < tenant.domains.length ? `${text} (${tenant.domains.length - known.length} unknown)` : text;
}

export function subscriptionText(tenant: PageTenant): string {
  const held =
    tenant.subscription === "none"
      ? ""
      : tenant.subscriptionHeld
        ? "; held in the fleet's state"
        : "; none held in the fleet's state";
  return `subscription ${tenant.subscription} (inventory)${held}`;
}

export function organizationText(tenant: PageTenant): string {
  const held = tenant.subscriptionHeld ? "the fleet's state holds it" : "the fleet's state holds none";
  return `Organisation ${tenant.organizationId || "none in the fleet's state"} (state); plan ${tenant.plan}, subscription ${tenant.subscription} (inventory; ${held})`;
}

/** The days of the page's read window with reports for the domain, as indexes into its series. */
export function reportedDays(series: PassRateSeries): number[] {
  return series.messages.flatMap((messages, index) => (messages === null ? [] : [index]));
}

/** A reported day's rate: both rates are there whenever the day's messages are. */
export function rateOn(rates: (number | null)[], index: number): number {
  return rates[index] as number;
}

/** The lowest rate drawn: a multiple of 10 under the domain's lowest, so 97% and 99% do not look the same. */
export function floorOf(series: PassRateSeries, reported: number[]): number {
  const rates = reported.map((index) => Math.min(rateOn(series.dkim, index), rateOn(series.spf, index)));
  return Math.max(0, Math.min(90, Math.floor((Math.min(...rates, 100) - 1) / 10) * 10));
}

/** A domain's chart in words: its scale and last reported day, and the days that could not be read. */
export function chartWords(series: PassRateSeries, reported: number[], days: string[]): string {
  const last = reported[reported.length - 1] as number;
  let words =
    reported.length === 0
      ? "no reports"
      : `${reported.length} day(s) of reports, scale ${floorOf(series, reported)}–100%; last ${days[last]}: DKIM ${series.dkim[last]}%, SPF ${series.spf[last]}%, ${series.messages[last]} messages`;
  if (series.unread.length > 0) words += `; ${series.unread.length} day(s) unknown (read failed)`;
  return words;
}

export function publishingText(domain: PageDomain): string {
  const where = domain.publishing;
  if (where.by === "server") return `server ${where.server}${where.zone ? ` (zone ${where.zone})` : ""}`;
  if (where.by === "module") return `module ${where.module}`;
  return "not by the fleet";
}

export function stageText(domain: PageDomain): string {
  if (domain.stageFrom === "observed") {
    return domain.stage + (domain.stage !== "unknown" ? " (observed by the service)" : "");
  }
  return `${domain.stage} \u2192 target ${domain.target} (inventory); observed ${domain.observed} (service)`;
}
