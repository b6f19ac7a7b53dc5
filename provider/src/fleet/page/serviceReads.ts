import type { DomainOverview } from "../../api";
import type { DmarcClient } from "../../client";
import { runPool } from "../pool";
import { type PassRateSeries, type RecordCheck, UNKNOWN } from "./model";

// The service's batched reads behind the page: each organisation's domain
// overview, and each domain's DKIM and SPF pass rates per day (the client
// sends 100 domains a request). A read that fails is written down with the domains it fed, so
// their cells read "unknown", never fine.

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

export interface ServiceFacts {
  /** By organisation id: its domains by name, or undefined when the read failed. */
  overviews: Map<string, Map<string, DomainFacts> | undefined>;
  passRates: Map<string, PassRateSeries>;
  failures: string[];
  days: string[];
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

/** Each domain's pass rates, one read a day (the client sends 100 domains a request); a failed day is unread. */
async function passRates(reads: ReportReads, domains: readonly string[], days: readonly string[], failures: string[]) {
  const series = new Map<string, PassRateSeries>(domains.map((domain) => [domain, emptySeries(days.length)]));
  const toRead = domains.length === 0 ? [] : days.map((day, index) => ({ day, index }));
  await runPool(toRead, READS_AT_ONCE, async ({ day, index }) => {
    try {
      for (const row of await reads.authPassRates({ domains, from: day, to: day })) {
        const entry = series.get(row.domain);
        if (!entry || row.messages <= 0) continue;
        entry.dkim[index] = row.dkimPassRate;
        entry.spf[index] = row.spfPassRate;
        entry.messages[index] = row.messages;
      }
    } catch (error) {
      failures.push(`pass rates of ${domains.length} domain(s) on ${day}: ${errorMessage(error)}`);
      for (const domain of domains) series.get(domain)?.unread.push(day);
    }
  });
  for (const entry of series.values()) entry.unread.sort();
  return series;
}

/** Reads the organisations' overviews and the domains' pass rates over `days`; failures are collected, not thrown. */
export async function readServiceFacts(
  reads: ReportReads,
  organizations: readonly string[],
  domains: readonly string[],
  days: readonly string[],
): Promise<ServiceFacts> {
  const failures: string[] = [];
  const [byOrganization, rates] = await Promise.all([
    overviews(reads, organizations, { from: days[0] as string, to: days[days.length - 1] as string }, failures),
    passRates(reads, domains, days, failures),
  ]);
  return { overviews: byOrganization, passRates: rates, failures, days: [...days] };
}
