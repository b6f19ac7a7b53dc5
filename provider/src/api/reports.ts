import { z } from "zod";
import { listOf, MAX_PAGE_SIZE } from "./common";
import { DomainType } from "./domains";
import { DomainName } from "./validation";

// The aggregate-report routes and the domain overview (facts page, "Aggregate
// reports and domain overview"): the evidence a policy ramp reads. Answers
// decode leniently (a number where a string is published, fields left out);
// requests are what the emulator refuses on.

/** How the service classifies a report's messages; the pass-rate and volume routes filter by them. */
export const ReportType = z.enum(["dmarc-capable", "non-compliant", "threat-unknown", "forwarded"]);
export type ReportType = z.infer<typeof ReportType>;

/** The policy the service observes in a domain's `_dmarc` record; `missing` when there is none. */
export const ObservedPolicy = z.enum(["none", "quarantine", "reject", "missing"]);
export type ObservedPolicy = z.infer<typeof ObservedPolicy>;

/** What the overview says of one of a domain's SPF, DKIM, DMARC and BIMI records. */
export const RecordStatus = z.enum(["no-record", "warning", "valid"]);
export type RecordStatus = z.infer<typeof RecordStatus>;

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2}))?$/;

/** A day (`2026-11-24`) or an instant (`2026-11-24T00:00:00.000Z`), as "ISO format" admits both. */
export const IsoDate = z.string().refine((value) => ISO_DATE.test(value) && !Number.isNaN(Date.parse(value)), {
  message: "must be an ISO 8601 date or date-time such as 2026-11-24 or 2026-11-24T00:00:00.000Z",
});

export const ReportDateRange = z
  .object({ from: IsoDate, to: IsoDate })
  // A date that does not parse is refused on its own; only two good ones are compared.
  .refine(({ from, to }) => !(Date.parse(from) > Date.parse(to)), {
    message: "from must not be after to",
    path: ["to"],
  });
export type ReportDateRange = z.infer<typeof ReportDateRange>;

export const DomainWithReportTypes = z.object({
  domainName: DomainName,
  reportTypes: z.array(ReportType).min(1, { message: "must name at least one report type" }),
});
export type DomainWithReportTypes = z.infer<typeof DomainWithReportTypes>;

/** `filters`: conditions keyed by field name. Required by the description; the client sends none. */
export const ReportFilters = z.record(
  z.string(),
  z.object({ name: z.string().min(1), type: z.string().min(1), value: z.unknown() }),
);

const ReportPage = {
  page: z.number().int().min(1).optional(),
  pageSize: z.number().int().min(1).max(MAX_PAGE_SIZE).optional(),
};

/** `POST /v1/dmarc/rua/auth-pass-rates`: names domains, never an organisation. */
export const PassRatesRequest = z.object({
  domainsWithReportTypes: z.array(DomainWithReportTypes).min(1, { message: "must name at least one domain" }),
  dateRange: ReportDateRange,
  filters: ReportFilters,
  ...ReportPage,
});
export type PassRatesRequest = z.infer<typeof PassRatesRequest>;

/** A message count: published as a string on the pass-rate route and as a number on the volume route. */
export const MessageCount = z.union([z.string().regex(/^\d+$/, { message: "must be a whole number" }), z.number()]);

const Percent = z.number().min(0).max(100);

export const PassRateRow = z.object({
  policyDomain: z.string().min(1),
  dkimPassRate: Percent,
  spfPassRate: Percent,
  count: MessageCount,
});
export type PassRateRow = z.infer<typeof PassRateRow>;

export const PassRatesPage = listOf(PassRateRow);

export const VolumePeriod = z.enum(["day", "week", "month"]);
export type VolumePeriod = z.infer<typeof VolumePeriod>;

/** `POST /v1/dmarc/rua/volume-history`: the pass-rate request plus a period and grouping. */
export const VolumeHistoryRequest = PassRatesRequest.extend({
  period: VolumePeriod.optional(),
  groupByFields: z.array(z.string().min(1)).optional(),
});
export type VolumeHistoryRequest = z.infer<typeof VolumeHistoryRequest>;

/** One period of one domain and report type, with the grouped fields beside these (camel case, as published). */
export const VolumeHistoryRow = z
  .object({
    policyDomain: z.string().min(1),
    startDate: z.string().min(1),
    endDate: z.string().min(1),
    reportType: z.string().min(1),
    count: MessageCount,
  })
  .catchall(z.unknown());
export type VolumeHistoryRow = z.infer<typeof VolumeHistoryRow>;

export const VolumeHistoryPage = listOf(VolumeHistoryRow);

export const OverviewFilterOperator = z.enum([
  "eq",
  "neq",
  "gt",
  "gte",
  "lt",
  "lte",
  "in",
  "nin",
  "starts_with",
  "ends_with",
  "contains",
]);
export type OverviewFilterOperator = z.infer<typeof OverviewFilterOperator>;

/** A filter condition of the overview: a field compared with a value, or conditions joined. */
export type OverviewFilter =
  | { field: string; operator: OverviewFilterOperator; value?: unknown }
  | { operator: "AND" | "OR"; conditions: OverviewFilter[] };

export const OverviewFilter: z.ZodType<OverviewFilter> = z.lazy(() =>
  z.union([
    z.object({ field: z.string().min(1), operator: OverviewFilterOperator, value: z.unknown() }),
    z.object({ operator: z.enum(["AND", "OR"]), conditions: z.array(OverviewFilter) }),
  ]),
);

/** `POST /v1/domains/overview`: one organisation's domains with what the service observes of them. */
export const DomainsOverviewRequest = z.object({
  organizationId: z.string().min(1),
  startDate: IsoDate,
  endDate: IsoDate,
  filters: z.union([OverviewFilter, z.array(OverviewFilter)]).optional(),
  ...ReportPage,
});
export type DomainsOverviewRequest = z.infer<typeof DomainsOverviewRequest>;

const Compliant = z.object({
  trend: z.string().optional(),
  value: z.number().optional(),
  percentage: z.number().optional(),
});

/** Snake case, as published; the description requires no field, the client needs the name and the policy. */
export const DomainOverview = z.object({
  domain: z.string().min(1),
  type: DomainType.optional(),
  policy: ObservedPolicy,
  spf: RecordStatus.optional(),
  dkim: RecordStatus.optional(),
  dmarc: RecordStatus.optional(),
  bimi: RecordStatus.optional(),
  volume: z.number().optional(),
  spf_pass_rate: z.number().optional(),
  dkim_pass_rate: z.number().optional(),
  dmarc_compliance: z
    .object({
      compliant: Compliant.optional(),
      none_compliant: Compliant.optional(),
      overall_compliance: z.number().optional(),
    })
    .optional(),
  domain_group: z.string().nullable().optional(),
  domain_verified: z.boolean().optional(),
  domain_logo_url: z.string().nullable().optional(),
});
export type DomainOverview = z.infer<typeof DomainOverview>;

export const DomainsOverviewPage = listOf(DomainOverview);
