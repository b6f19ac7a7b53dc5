import {
  type DomainOverview,
  DomainsOverviewPage,
  DomainsOverviewRequest,
  type PassRateRow,
  PassRatesPage,
  PassRatesRequest,
  type ReportType,
  VolumeHistoryPage,
  VolumeHistoryRequest,
  type VolumeHistoryRow,
  type VolumePeriod,
} from "pulumi-dmarc-partner/api";
import { organizationInScope } from "../access";
import type { Context } from "../context";
import { unprocessable } from "../errors";
import { paginate } from "../pagination";
import type { Partner } from "../partners";
import { endOf, formatDay, startOf } from "../reports/clock";
import { type DayRange, dayRangeOf, percent, periodOf, rowsIn, totalsOf } from "../reports/figures";
import { overviewOf } from "../reports/overview";
import { checkFilters, matches } from "../reports/overviewFilter";
import type { ApiRouter, PartnerCall } from "../router";
import type { DomainRecord, Store } from "../store";
import { conform, parseInput } from "../wire";

// Aggregate reports and the domain overview. The pass-rate and volume routes
// name domains and no organisation: they answer for the calling partner's
// domains of those names, in whichever organisation; a name the partner does
// not hold has no rows, like a domain without reports.

/** The description lists only 422 for these routes' refusals. */
const REFUSAL_STATUS = 422;

/** The description's page sizes when none is asked for: 100 on the report routes, 1 on the overview. */
const REPORT_PAGE_SIZE = 100;
const OVERVIEW_PAGE_SIZE = 1;

/** Rows always name their domain and report type; other groupings are not emulated. */
const EMULATED_GROUPINGS = new Set(["policy_domain", "report_type"]);

/** A domain name held in two organisations is one DNS domain with one set of reports: the oldest record's. */
function partnerDomain(store: Store, partner: Partner, name: string): DomainRecord | undefined {
  return [...store.domains.values()]
    .filter((record) => record.partnerId === partner.id && record.domain === name)
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt))[0];
}

interface ReportBody {
  domainsWithReportTypes: { domainName: string; reportTypes: ReportType[] }[];
  filters: Record<string, unknown>;
}

/** Each named domain the partner holds, once, with the union of the report types asked for it. */
function namedDomains(store: Store, partner: Partner, body: ReportBody): [DomainRecord, Set<ReportType>][] {
  if (Object.keys(body.filters).length > 0) {
    throw unprocessable("filters", "the emulator applies no report filters: send {}", "filters_not_emulated");
  }
  const named = new Map<string, Set<ReportType>>();
  for (const { domainName, reportTypes } of body.domainsWithReportTypes) {
    named.set(domainName, new Set([...(named.get(domainName) ?? []), ...reportTypes]));
  }
  return [...named].flatMap(([name, types]) => {
    const record = partnerDomain(store, partner, name);
    return record ? [[record, types] as [DomainRecord, Set<ReportType>]] : [];
  });
}

function passRates({ store }: Context, { request, partner }: PartnerCall) {
  const body = parseInput(PassRatesRequest, request.body, "body", REFUSAL_STATUS);
  const range = dayRangeOf(body.dateRange);
  const rows = namedDomains(store, partner, body).flatMap(([record, types]): PassRateRow[] => {
    const totals = totalsOf(rowsIn(store, record, range, types));
    if (totals.messages === 0) return [];
    return [
      {
        policyDomain: record.domain,
        dkimPassRate: percent(totals.dkimPass, totals.messages),
        spfPassRate: percent(totals.spfPass, totals.messages),
        count: String(totals.messages),
      },
    ];
  });
  return conform(PassRatesPage, paginate(rows, { page: body.page, pageSize: body.pageSize ?? REPORT_PAGE_SIZE }));
}

/** One domain's volume per period and report type, each period cut to the range. */
function volumeRows(
  store: Store,
  [record, types]: [DomainRecord, Set<ReportType>],
  range: DayRange,
  period: VolumePeriod,
) {
  const sums = new Map<string, { bucket: DayRange; reportType: ReportType; count: number }>();
  for (const row of rowsIn(store, record, range, types)) {
    const bucket = periodOf(row.day, period);
    const key = `${bucket.first} ${row.reportType}`;
    const sum = sums.get(key) ?? { bucket, reportType: row.reportType, count: 0 };
    sums.set(key, { ...sum, count: sum.count + row.messages });
  }
  return [...sums.values()].map(({ bucket, reportType, count }): VolumeHistoryRow => {
    const date = formatDay(bucket.first);
    return {
      policyDomain: record.domain,
      reportType,
      startDate: startOf(Math.max(bucket.first, range.first)),
      endDate: endOf(Math.min(bucket.last, range.last)),
      reportDate: date,
      date,
      count,
      qty: count,
    };
  });
}

function volumeHistory({ store }: Context, { request, partner }: PartnerCall) {
  const body = parseInput(VolumeHistoryRequest, request.body, "body", REFUSAL_STATUS);
  const unknown = (body.groupByFields ?? []).filter((field) => !EMULATED_GROUPINGS.has(field));
  if (unknown.length > 0) {
    const message = `the emulator groups by ${[...EMULATED_GROUPINGS].join(" and ")} only, not ${unknown.join(", ")}`;
    throw unprocessable("groupByFields", message, "grouping_not_emulated");
  }
  const range = dayRangeOf(body.dateRange);
  const rows = namedDomains(store, partner, body).flatMap((named) =>
    volumeRows(store, named, range, body.period ?? "day"),
  );
  return conform(VolumeHistoryPage, paginate(rows, { page: body.page, pageSize: body.pageSize ?? REPORT_PAGE_SIZE }));
}

async function domainsOverview(ctx: Context, { request, partner }: PartnerCall) {
  const body = parseInput(DomainsOverviewRequest, request.body, "body", REFUSAL_STATUS);
  checkFilters(body.filters);
  organizationInScope(ctx.store, ctx.profile, partner, body.organizationId);
  const range = dayRangeOf({ from: body.startDate, to: body.endDate });
  if (range.first > range.last) throw unprocessable("endDate", "must not be before startDate", "bad_range");
  const views: DomainOverview[] = await Promise.all(
    ctx.store.domainsOf(body.organizationId).map((record) => overviewOf(ctx, record, range)),
  );
  const shown = views.filter((view) => matches(view, body.filters));
  return conform(
    DomainsOverviewPage,
    paginate(shown, { page: body.page, pageSize: body.pageSize ?? OVERVIEW_PAGE_SIZE }),
  );
}

export function reportRoutes(router: ApiRouter, ctx: Context): void {
  router.resource("POST", "/dmarc/rua/auth-pass-rates", (call) => passRates(ctx, call));
  router.resource("POST", "/dmarc/rua/volume-history", (call) => volumeHistory(ctx, call));
  router.resource("POST", "/domains/overview", (call) => domainsOverview(ctx, call));
}
