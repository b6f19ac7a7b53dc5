import type { DomainOverview } from "../../api";
import type { DmarcClient } from "../../client";
import { runPool } from "../pool";
import { type PassRateSeries, type RecordCheck, UNKNOWN } from "./model";

// The service's batched reads behind the page: each organisation's domain
// overview, and each domain's DKIM and SPF pass rates per day (the client
// sends 100 domains a request), but only for the days and domains not
// already read: a whole day's reports do not change. A read that fails is
// written down with the domains it fed, so their cells read "unknown",
// never fine.

const errorMessage = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Days of pass rates on the page, today's last. */
export const PAGE_DAYS = 30;

/** Days read at once: the client paces the requests to the service's rate whatever this is. */
const READS_AT_ONCE = 4;

/** The two reads the page makes. */
export type ReportReads = Pick<DmarcClient, "domainsOverview" | "authPassRates">;

/** What the overview says of one domain, in the page's words. */
export interface DomainFacts {
  verified: boolean | undefined;
  policy: string;
  spf: RecordCheck;
  dkim: RecordCheck;
  dmarc: RecordCheck;
}

/** One domain's day as read: DKIM and SPF pass rates and messages, or null for a day without reports. */
export type DayRate = [dkim: number, spf: number, messages: number] | null;

/** Days of pass rates already read, by day (`YYYY-MM-DD`), then by domain. */
export type DayRates = Record<string, Record<string, DayRate>>;

export interface ServiceFacts {
  /** By organisation id: its domains by name, or undefined when the read failed. */
  overviews: Map<string, Map<string, DomainFacts> | undefined>;
  passRates: Map<string, PassRateSeries>;
  failures: string[];
  days: string[];
  /** Every day's rates now known, those given and those read: what the next run need not read again. */
  rates: DayRates;
}

/** The `count` days up to and including `today`'s, oldest first, as `YYYY-MM-DD`. */
export function pageDays(today: Date, count: number = PAGE_DAYS): string[] {
  const end = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate());
  return Array.from({ length: count }, (_, index) =>
    new Date(end - (count - 1 - index) * 86_400_000).toISOString().slice(0, 10),
  );
}

function factsOf(overview: DomainOverview): DomainFacts {
  return {
    verified: overview.domain_verified,
    policy: overview.policy,
    spf: overview.spf ?? UNKNOWN,
    dkim: overview.dkim ?? UNKNOWN,
    dmarc: overview.dmarc ?? UNKNOWN,
  };
}

async function overviews(
  reads: ReportReads,
  organizations: readonly string[],
  range: { from: string; to: string },
  failures: string[],
) {
  const answers = await runPool(organizations, READS_AT_ONCE, async (organizationId) => {
    try {
      const domains = await reads.domainsOverview(organizationId, range);
      return new Map(domains.map((overview) => [overview.domain, factsOf(overview)]));
    } catch (error) {
      failures.push(`overview of organisation ${organizationId}: ${errorMessage(error)}`);
      return undefined;
    }
  });
  return new Map(organizations.map((id, index) => [id, answers[index]]));
}

/** A series of no reports yet, one null per day. */
export function emptySeries(days: number): PassRateSeries {
  return { dkim: Array(days).fill(null), spf: Array(days).fill(null), messages: Array(days).fill(null), unread: [] };
}

/** The domains' day as one read answered it: null for each domain it has no reports of. */
async function readDay(reads: ReportReads, domains: readonly string[], day: string): Promise<Record<string, DayRate>> {
  const read: Record<string, DayRate> = Object.fromEntries(domains.map((domain) => [domain, null]));
  for (const row of await reads.authPassRates({ domains, from: day, to: day })) {
    if (row.domain in read && row.messages > 0) read[row.domain] = [row.dkimPassRate, row.spfPassRate, row.messages];
  }
  return read;
}

/**
 * Each domain's pass rates: the days `known` has, and one read a day for
 * the domains it has not (the client sends 100 domains a request); a failed
 * day is unread, and not known to the next run.
 */
async function passRates(
  reads: ReportReads,
  domains: readonly string[],
  days: readonly string[],
  failures: string[],
  known: DayRates,
) {
  const series = new Map<string, PassRateSeries>(domains.map((domain) => [domain, emptySeries(days.length)]));
  const rates: DayRates = {};
  const toRead = days
    .map((day) => ({ day, domains: domains.filter((domain) => known[day]?.[domain] === undefined) }))
    .filter((read) => read.domains.length > 0);
  await runPool(toRead, READS_AT_ONCE, async ({ day, domains: unknown }) => {
    try {
      rates[day] = { ...known[day], ...(await readDay(reads, unknown, day)) };
    } catch (error) {
      failures.push(`pass rates of ${unknown.length} domain(s) on ${day}: ${errorMessage(error)}`);
      for (const domain of unknown) series.get(domain)?.unread.push(day);
    }
  });
  days.forEach((day, index) => {
    for (const [domain, rate] of Object.entries(rates[day] ?? known[day] ?? {})) {
      const entry = series.get(domain);
      if (!entry || rate === null) continue;
      [entry.dkim[index], entry.spf[index], entry.messages[index]] = rate;
    }
  });
  for (const entry of series.values()) entry.unread.sort();
  const kept = days.flatMap((day) => ((rates[day] ?? known[day]) ? [[day, rates[day] ?? known[day]] as const] : []));
  return { series, rates: Object.fromEntries(kept) as DayRates };
}

/**
 * Reads the organisations' overviews and the domains' pass rates over
 * `days`, but no day and domain `known` already has; failures are
 * collected, not thrown.
 */
export async function readServiceFacts(
  reads: ReportReads,
  organizations: readonly string[],
  domains: readonly string[],
  days: readonly string[],
  known: DayRates = {},
): Promise<ServiceFacts> {
  const failures: string[] = [];
  const [byOrganization, { series, rates }] = await Promise.all([
    overviews(reads, organizations, { from: days[0] as string, to: days[days.length - 1] as string }, failures),
    passRates(reads, domains, days, failures, known),
  ]);
  return { overviews: byOrganization, passRates: series, failures, days: [...days], rates };
}
