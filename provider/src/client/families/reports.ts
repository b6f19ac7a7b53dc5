import type { z } from "zod";
import {
  type DomainOverview,
  DomainsOverviewPage,
  type DomainsOverviewRequest,
  isCalendarDay,
  type PassRateRow,
  PassRatesPage,
  type PassRatesRequest,
  ReportType,
  VolumeHistoryPage,
  type VolumeHistoryRequest,
  type VolumeHistoryRow,
  type VolumePeriod,
} from "../../api";
import { DmarcConfigError } from "../errors";
import type { Requester } from "../requester";
import type { OrganizationCalls } from "./organizations";
import { collectPages, PAGE_SIZE, type Page } from "./pagination";

// The evidence a policy ramp reads: pass rates, volumes and the overview.
// The pass-rate and volume routes name domains and no organisation, so a
// caller's domains go in batches of up to a page, whatever organisation
// holds them (docs/api-assumptions.md).

/** Domains a pass-rate or volume request names: one page of answer rows when each has one row. */
export const DOMAINS_PER_REQUEST = PAGE_SIZE;

/**
 * Every report type unless told otherwise: the figures then count all of a
 * domain's mail, which is what its receivers will judge once it enforces.
 */
export const ALL_REPORT_TYPES: readonly ReportType[] = ReportType.options;

/** Whole days, `YYYY-MM-DD`, `from` and `to` included. */
export interface ReportRange {
  from: string;
  to: string;
}

export interface ReportQuery extends ReportRange {
  domains: readonly string[];
  reportTypes?: readonly ReportType[];
}

export interface VolumeQuery extends ReportQuery {
  period?: VolumePeriod;
  /** Report fields to split each period by, as the description names them (`disposition`, `policy_p`...). */
  groupByFields?: readonly string[];
}

/** One domain's figures over a range; a domain without reports in it has none. */
export interface PassRate {
  domain: string;
  /** Percent, 0–100. */
  dkimPassRate: number;
  /** Percent, 0–100. */
  spfPassRate: number;
  messages: number;
}

export interface VolumeRow {
  domain: string;
  startDate: string;
  endDate: string;
  reportType: string;
  messages: number;
  /** The grouped fields' values, keyed by the names asked for in `groupByFields`. */
  fields: Record<string, string>;
}

/** The route's ISO form of whole days: the first instant of `from` to the last of `to`, in UTC. */
function dayRange(range: ReportRange): { from: string; to: string } {
  for (const [name, day] of Object.entries({ from: range.from, to: range.to })) {
    if (!isCalendarDay(day)) {
      throw new DmarcConfigError(`report range: ${name} "${day}" is not a date such as 2026-11-24 (YYYY-MM-DD)`);
    }
  }
  if (range.from > range.to) throw new DmarcConfigError(`report range: from ${range.from} is after to ${range.to}`);
  return { from: `${range.from}T00:00:00.000Z`, to: `${range.to}T23:59:59.999Z` };
}

function batchesOf<T>(items: readonly T[], size: number): T[][] {
  const unique = [...new Set(items)];
  const batches: T[][] = [];
  for (let start = 0; start < unique.length; start += size) batches.push(unique.slice(start, start + size));
  return batches;
}

const messagesOf = (count: string | number): number => Number(count);

/** `policy_p` is answered as `policyP`. */
const camelCase = (field: string) => field.replace(/_([a-z])/g, (_match, letter: string) => letter.toUpperCase());

function fieldsOf(row: VolumeHistoryRow, asked: readonly string[]): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const field of asked) {
    const value = row[camelCase(field)] ?? row[field];
    if (value !== undefined && value !== null) fields[field] = String(value);
  }
  return fields;
}

/** The ways the three routes differ, so one paging loop serves them. */
interface PagedPost<Row> {
  operation: string;
  path: string;
  body: Record<string, unknown>;
  schema: z.ZodType<Page<Row>>;
  keyOf: (row: Row) => string;
}

export class ReportReads {
  constructor(
    private readonly requester: Requester,
    private readonly organizations: OrganizationCalls,
  ) {}

  /** Pass rates of the domains over whole days, across organisations, up to 100 domains a request. */
  async authPassRates(query: ReportQuery): Promise<PassRate[]> {
    const rows = await this.eachBatch(query, (body) => ({
      operation: "read authentication pass rates",
      path: "/v1/dmarc/rua/auth-pass-rates",
      body,
      schema: PassRatesPage,
      keyOf: (row: PassRateRow) => row.policyDomain,
    }));
    return rows.map((row) => ({
      domain: row.policyDomain,
      dkimPassRate: row.dkimPassRate,
      spfPassRate: row.spfPassRate,
      messages: messagesOf(row.count),
    }));
  }

  /**
   * Message volume of the domains per period and report type, split by
   * `groupByFields`. Grouped by `policy_domain` besides the fields asked for,
   * so that every row names its domain.
   */
  async volumeHistory(query: VolumeQuery): Promise<VolumeRow[]> {
    const asked = query.groupByFields ?? [];
    const groupByFields = [...new Set(["policy_domain", ...asked])];
    const period = query.period ?? "day";
    const rows = await this.eachBatch(query, (body) => ({
      operation: "read volume history",
      path: "/v1/dmarc/rua/volume-history",
      body: { ...body, period, groupByFields } satisfies Omit<VolumeHistoryRequest, "page" | "pageSize">,
      schema: VolumeHistoryPage,
      keyOf: (row: VolumeHistoryRow) =>
        JSON.stringify([row.policyDomain, row.startDate, row.reportType, fieldsOf(row, asked)]),
    }));
    return rows.map((row) => ({
      domain: row.policyDomain,
      startDate: row.startDate,
      endDate: row.endDate,
      reportType: row.reportType,
      messages: messagesOf(row.count),
      fields: fieldsOf(row, asked),
    }));
  }

  /** Every domain of the organisation as the service observes it: policy, records, volume, compliance. */
  domainsOverview(organizationId: string, range: ReportRange): Promise<DomainOverview[]> {
    const { from, to } = dayRange(range);
    const body: Omit<DomainsOverviewRequest, "page" | "pageSize"> = { organizationId, startDate: from, endDate: to };
    return this.organizations.scoped(
      organizationId,
      this.allPages({
        operation: "read domains overview",
        path: "/v1/domains/overview",
        body,
        schema: DomainsOverviewPage,
        keyOf: (row) => row.domain,
      }),
    );
  }

  /** The query's domains in batches, their answers joined. */
  private async eachBatch<Row>(
    query: ReportQuery,
    postOf: (body: Omit<PassRatesRequest, "page" | "pageSize">) => PagedPost<Row>,
  ): Promise<Row[]> {
    const dateRange = dayRange(query);
    const reportTypes = [...(query.reportTypes ?? ALL_REPORT_TYPES)];
    const answers = await Promise.all(
      batchesOf(query.domains, DOMAINS_PER_REQUEST).map((domains) =>
        this.allPages(
          postOf({
            domainsWithReportTypes: domains.map((domainName) => ({ domainName, reportTypes })),
            dateRange,
            filters: {},
          }),
        ),
      ),
    );
    return answers.flat();
  }

  private allPages<Row>({ operation, path, body, schema, keyOf }: PagedPost<Row>): Promise<Row[]> {
    return collectPages(
      { operation, method: "POST", path },
      (page) =>
        this.requester.call({
          operation,
          method: "POST",
          path,
          json: { ...body, page, pageSize: PAGE_SIZE },
          schema,
          // Reads: sending one again changes nothing.
          repeatable: true,
        }),
      keyOf,
    );
  }
}
