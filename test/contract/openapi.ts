import { z } from "zod";

// The service's OpenAPI description ("EasyDMARC API 1.0.0",
// specs/easydmarc-openapi.json in the vendor's public-api-docs repository),
// restated in our own words for the routes this project calls: the fields it
// requires, their types, and the statuses it lists. Strict objects: an answer
// with a field the description does not name fails, so the emulator's
// "published" profile cannot drift into the guides' shapes unseen.
// `undefined` for a status means the description lists it without a body.

const DateTime = z.string().refine((value) => !Number.isNaN(Date.parse(value)), "must be an ISO 8601 date-time");

/** `ErrorResponse`: no field required; `statusCode` is text. */
const ErrorResponse = z
  .object({
    statusCode: z.string().regex(/^\d{3}$/),
    error: z.string(),
    traceId: z.string(),
    timestamp: DateTime,
    details: z.object({ message: z.string().optional(), property: z.string().optional() }).strict(),
  })
  .partial()
  .strict();

/** `PaginationMeta`: nothing required. */
const PaginationMeta = z
  .object({
    total: z.number().int(),
    limit: z.number().int(),
    page: z.number().int(),
    pageCount: z.number().int(),
    hasPreviousPage: z.boolean(),
    hasNextPage: z.boolean(),
    // The domain-group list's example sends it; the schema does not name it.
    pageSize: z.number().int(),
  })
  .partial()
  .strict();

/** `PageMeta_2` of the organisation list: all six required. */
const OrganizationPageMeta = z
  .object({
    page: z.number(),
    limit: z.number(),
    total: z.number(),
    pageCount: z.number(),
    hasPreviousPage: z.boolean(),
    hasNextPage: z.boolean(),
  })
  .strict();

const listOf = (item: z.ZodType, meta: z.ZodType = PaginationMeta) =>
  z
    .object({ data: z.array(item), meta })
    .partial()
    .strict();

const ShortOrganization = z
  .object({ id: z.string(), name: z.string(), createdAt: DateTime, updatedAt: DateTime })
  .strict();

const DomainGroup = z.object({ id: z.string(), name: z.string(), domains: z.array(z.string()).optional() }).strict();

/** `Domain`: no field required; `domainGroupId` follows `^dmngrp_[a-f0-9]{24,}$`. */
const Domain = z
  .object({
    domain: z.string(),
    type: z.enum(["sending", "parked"]),
    policy: z.enum(["none", "reject", "missing", "invalid", "quarantine"]),
    domainVerified: z.boolean(),
    logoUrl: z.string(),
    domainGroup: z.string(),
    domainGroupId: z.string().regex(/^dmngrp_[a-f0-9]{24,}$/),
  })
  .partial()
  .strict();

const SetupRecord = z.object({ host: z.string(), type: z.enum(["cname", "txt"]), value: z.string() }).strict();

const Webhook = z
  .object({
    objectId: z.string(),
    name: z.string(),
    ownerId: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    active: z.boolean(),
    createdAt: DateTime,
    updatedAt: DateTime,
  })
  .strict();

/** `WebhookEventData`: the payload of a delivery. */
const WebhookEventData = z
  .object({
    data: z.object({ domain: z.string(), verificationStatus: z.string() }).passthrough(),
    metadata: z.object({ eventName: z.string(), ownerId: z.string() }).strict(),
  })
  .passthrough();

/** `WebhookDelivery`: `webhookObjectId` and `nextRetryAt` are numbers in the description. */
const WebhookDelivery = z
  .object({
    webhookObjectId: z.union([z.number(), z.string()]),
    eventName: z.string(),
    payload: WebhookEventData,
    attempts: z.number(),
    maxAttempts: z.number(),
    nextRetryAt: z.union([z.number(), z.string()]).nullable().optional(),
    status: z.enum(["failed", "pending", "success"]),
    statusCode: z.number().nullable().optional(),
    error: z.string().nullable().optional(),
    deliveredAt: DateTime.nullable().optional(),
    createdAt: DateTime,
  })
  .strict();

/** `PlanFeaturesV2`: camelCase, nothing required. */
const PlanFeatures = z
  .object({
    domainCount: z.number(),
    emailVolumeCount: z.number(),
    verificationCount: z.number(),
    dataRetentionDays: z.number(),
    publicApi: z.boolean(),
    bimiReporting: z.boolean(),
    saml: z.boolean(),
    alerting: z.boolean(),
    apiAccess: z.boolean(),
    reputationMonitoring: z.boolean(),
    mailboxCount: z.number(),
  })
  .partial()
  .strict();

/** `PlanFeatures_2`: the snake_case feature set of a subscription item. */
const ItemFeatures = z
  .object({
    domain_count: z.number(),
    email_volume_count: z.number(),
    verification_count: z.number(),
    data_retention_days: z.number(),
    public_api: z.boolean(),
    bimi_reporting: z.boolean(),
    saml: z.boolean(),
    alerting: z.boolean(),
    api_access: z.boolean(),
    reputation_monitoring: z.boolean(),
    mailbox_count: z.number(),
  })
  .partial()
  .strict();

const Price = z
  .object({
    id: z.string(),
    name: z.string(),
    amount: z.number(),
    currency: z.enum(["USD", "EUR", "GBP"]),
    frequency: z.enum(["m", "y", "d"]),
    minimumBillableItems: z.unknown().optional(),
    billingCycles: z.unknown().optional(),
    billingPeriod: z.number(),
    createdAt: DateTime,
    updatedAt: DateTime,
  })
  .strict();

const Plan = z
  .object({
    id: z.string(),
    name: z.string(),
    features: PlanFeatures,
    prices: z.array(Price),
    createdAt: DateTime,
    updatedAt: DateTime,
  })
  .strict();

/** `SubscriptionV2`: `cancelledAt` optional. */
const Subscription = z
  .object({
    id: z.string(),
    expireDate: DateTime,
    cancelledAt: DateTime.nullable().optional(),
    items: z.array(
      z
        .object({
          id: z.string(),
          quantity: z.number().min(1),
          features: ItemFeatures,
          priceId: z.string(),
          createdAt: DateTime,
          updatedAt: DateTime,
        })
        .strict(),
    ),
    createdAt: DateTime,
    updatedAt: DateTime,
  })
  .strict();

const AuthToken = z
  .object({
    access_token: z.string(),
    expires_in: z.number(),
    refresh_expires_in: z.number().optional(),
    token_type: z.string(),
    "not-before-policy": z.number().optional(),
    scope: z.string().optional(),
  })
  .strict();

const MagicLink = z.object({ url: z.url(), expiringAt: DateTime }).strict();

const UserBasicInfo = z
  .object({
    id: z.uuid(),
    username: z.string().nullable(),
    firstName: z.string().nullable(),
    lastName: z.string().nullable(),
    email: z.string(),
    emailVerified: z.boolean(),
  })
  .strict();

const AuditLogItem = z
  .object({ label: z.string(), entityType: z.string(), id: z.string().optional(), imgPath: z.string().optional() })
  .strict();

/** `AuditLogResponse`: thirteen fields required. */
const AuditLogEntry = z
  .object({
    id: z.string(),
    user: z
      .object({
        id: z.string(),
        email: z.string(),
        fullName: z.string(),
        role: z.string(),
        avatar: z.string().optional(),
        avatarColor: z.string().optional(),
      })
      .strict(),
    date: DateTime,
    actionDate: DateTime,
    action: z.array(z.string()),
    entities: z.array(AuditLogItem),
    entity: z.array(AuditLogItem),
    country: z.object({ name: z.string(), code: z.string(), flagUrl: z.string().optional() }).strict(),
    ip: z.string(),
    platform: z
      .object({
        os: z.enum(["MAC", "WINDOWS", "LINUX", "OTHER"]),
        browser: z.enum(["CHROME", "SAFARI", "OPERA", "FIREFOX", "OTHER"]),
        device: z.enum(["PC", "PHONE", "OTHER"]),
      })
      .strict(),
    os: z.string(),
    browser: z.string(),
    device: z.string(),
    onData: z.array(AuditLogItem).optional(),
    from: AuditLogItem.optional(),
    to: AuditLogItem.optional(),
  })
  .strict();

const AuditLogPage = z
  .object({ data: z.array(AuditLogEntry), totalCount: z.number(), currentPage: z.number(), totalPages: z.number() })
  .strict();

/** `PageMeta_3` of the aggregate-report routes: all six required. */
const ReportPageMeta = OrganizationPageMeta;

const ReportTypeName = z.enum(["dmarc-capable", "non-compliant", "threat-unknown", "forwarded"]);

const DomainWithReportTypes = z.object({ domainName: z.string(), reportTypes: z.array(ReportTypeName) }).strict();

const FilterValue = z.object({ name: z.string(), type: z.string(), value: z.unknown() }).strict();

/** `PassRateDataRequest`: `domainsWithReportTypes`, `dateRange` and `filters` required; no organisation. */
const PassRateDataRequest = z
  .object({
    domainsWithReportTypes: z.array(DomainWithReportTypes),
    dateRange: z.object({ from: DateTime, to: DateTime }).strict(),
    filters: z.record(z.string(), FilterValue),
    page: z.number().min(1).optional(),
    pageSize: z.number().min(1).max(100).optional(),
  })
  .strict();

/** The fields a volume row may be grouped and ordered by: 55 in the description; these are the ones we use. */
const ReportField = z.enum(["policy_domain", "report_type", "disposition", "policy_p", "policy_sp", "pct"]);

/** `ReportsForPeriodRequest`: the pass-rate body with a period and grouping; its page size has no maximum. */
const ReportsForPeriodRequest = PassRateDataRequest.extend({
  pageSize: z.number().min(1).optional(),
  period: z.enum(["day", "week", "month"]).optional(),
  groupByFields: z.array(ReportField).optional(),
  orderFields: z.array(z.object({ field: ReportField, direction: z.enum(["asc", "desc"]) }).strict()).optional(),
}).strict();

/** `PassRate`: all four required; `count` is text. */
const PassRate = z
  .object({ policyDomain: z.string(), dkimPassRate: z.number(), spfPassRate: z.number(), count: z.string() })
  .strict();

const Day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);

/**
 * `DmarcReportVolumePerPeriod` requires all 38 fields of a raw report record
 * (source IP, DKIM results, envelope addresses...), which a row summed over a
 * period and grouped by domain and report type cannot carry. Restated: the
 * fields such a row can hold, with the description's names and types (`count`
 * a number here, unlike the pass rates), required where every row has them.
 */
const DmarcReportVolumePerPeriod = z
  .object({
    policyDomain: z.string(),
    reportType: z.string(),
    startDate: DateTime,
    endDate: DateTime,
    count: z.number(),
    reportDate: Day.optional(),
    date: Day.optional(),
    qty: z.number().optional(),
    disposition: z.string().optional(),
    pct: z.number().optional(),
    policyP: z.enum(["none", "quarantine", "reject"]).optional(),
    policySp: z.enum(["none", "quarantine", "reject"]).nullable().optional(),
  })
  .strict();

const RecordStatus = z.enum(["no-record", "warning", "valid"]);

const Compliant = z.object({ trend: z.string(), value: z.number(), percentage: z.number() }).partial().strict();

/** `DomainOverview`: no field required, snake case. */
const DomainOverview = z
  .object({
    domain: z.string(),
    policy: z.enum(["none", "missing", "quarantine", "reject"]),
    spf: RecordStatus,
    bimi: RecordStatus,
    dmarc: RecordStatus,
    dkim: RecordStatus,
    domain_logo_url: z.string(),
    volume: z.number(),
    spf_pass_rate: z.number(),
    dkim_pass_rate: z.number(),
    dmarc_compliance: z
      .object({ compliant: Compliant, none_compliant: Compliant, overall_compliance: z.number() })
      .partial()
      .strict(),
    domain_group: z.string(),
    domain_verified: z.boolean(),
    type: z.enum(["sending", "parked"]),
  })
  .partial()
  .strict();

type FilterCondition =
  | { field: string; value?: unknown; operator: string }
  | { operator: "AND" | "OR"; conditions: FilterCondition[] };

const FilterCondition: z.ZodType<FilterCondition> = z.lazy(() =>
  z.union([
    z
      .object({
        field: z.string(),
        value: z.unknown(),
        operator: z.enum(["eq", "neq", "gt", "gte", "lt", "lte", "in", "nin", "starts_with", "ends_with", "contains"]),
      })
      .strict(),
    z.object({ operator: z.enum(["AND", "OR"]), conditions: z.array(FilterCondition) }).strict(),
  ]),
);

/** The overview's body: nothing required; the dates are plain strings ("Start Date"). */
const DomainsOverviewRequest = z
  .object({
    organizationId: z.string(),
    startDate: z.string(),
    endDate: z.string(),
    page: z.number(),
    pageSize: z.number(),
    filters: z.union([FilterCondition, z.array(FilterCondition)]),
  })
  .partial()
  .strict();

/** A route's statuses as the description lists them: a schema, or `undefined` where it shows no body. */
type Statuses = Record<number, z.ZodType | undefined>;

export interface PublishedRoute {
  method: string;
  /** The description's path template. */
  path: string;
  statuses: Statuses;
  /** The request body the description describes, where it describes one this project sends. */
  request?: z.ZodType;
}

const errors = (...codes: number[]): Statuses => Object.fromEntries(codes.map((code) => [code, ErrorResponse]));

/** Every route this project calls, as the description publishes it. */
export const PUBLISHED_ROUTES: PublishedRoute[] = [
  { method: "POST", path: "/auth/token", statuses: { 200: AuthToken, ...errors(400, 401) } },
  { method: "POST", path: "/auth/magic-link", statuses: { 200: MagicLink, ...errors(400, 401, 403, 404) } },
  {
    method: "POST",
    path: "/v1/organizations",
    statuses: { 201: ShortOrganization, ...errors(400, 401, 403, 429, 500) },
  },
  {
    method: "GET",
    path: "/v1/organizations",
    statuses: { 200: listOf(ShortOrganization, OrganizationPageMeta).required(), ...errors(400, 401, 403, 429, 500) },
  },
  {
    method: "GET",
    path: "/v1/organizations/{organizationId}",
    statuses: { 200: ShortOrganization, ...errors(401, 403, 404, 429, 500) },
  },
  {
    method: "PATCH",
    path: "/v1/organizations/{organizationId}",
    statuses: { 200: ShortOrganization, ...errors(400, 401, 403, 404, 429, 500) },
  },
  {
    method: "DELETE",
    path: "/v1/organizations/{organizationId}",
    // The emulator refuses to delete an organisation with an active subscription (a choice of the facts page).
    statuses: { 204: undefined, ...errors(401, 403, 404, 409, 500) },
  },
  { method: "POST", path: "/v1/domain-groups", statuses: { 201: DomainGroup, ...errors(400, 401, 403, 429, 500) } },
  {
    method: "GET",
    path: "/v1/domain-groups",
    statuses: { 200: listOf(DomainGroup), ...errors(400, 401, 403, 429, 500) },
  },
  { method: "GET", path: "/v1/domain-groups/{id}", statuses: { 200: DomainGroup, ...errors(403, 404, 422) } },
  { method: "PUT", path: "/v1/domain-groups/{id}", statuses: { 200: DomainGroup, ...errors(400, 404) } },
  // 409: the emulator refuses to delete a group that still holds domains (a choice of the facts page).
  { method: "DELETE", path: "/v1/domain-groups/{id}", statuses: { 204: undefined, ...errors(403, 404, 409) } },
  { method: "POST", path: "/v1/domains", statuses: { 201: Domain, ...errors(400, 401, 403, 409, 422, 429, 500) } },
  {
    method: "POST",
    path: "/v1/domains/batch",
    statuses: { 201: z.array(Domain), ...errors(400, 401, 403, 409, 422, 429, 500) },
  },
  { method: "GET", path: "/v1/domains", statuses: { 200: listOf(Domain), ...errors(400, 401, 403, 429, 500) } },
  { method: "GET", path: "/v1/domains/{domain}", statuses: { 200: Domain, ...errors(400, 401, 403, 404, 429, 500) } },
  {
    method: "PATCH",
    path: "/v1/domains/{domain}",
    statuses: { 200: Domain, ...errors(400, 401, 403, 404, 429, 500) },
  },
  {
    method: "DELETE",
    path: "/v1/domains/{domain}",
    statuses: { 204: undefined, ...errors(400, 401, 403, 404, 429, 500) },
  },
  {
    method: "GET",
    path: "/v1/domains/{domain}/setup",
    statuses: { 200: SetupRecord, ...errors(400, 401, 403, 404, 429, 500) },
  },
  { method: "POST", path: "/v1/webhooks", statuses: { 201: Webhook, ...errors(400, 422) } },
  {
    method: "GET",
    path: "/v1/webhooks/owner/{ownerId}",
    statuses: { 200: listOf(Webhook), ...errors(404) },
  },
  { method: "GET", path: "/v1/webhooks/{id}", statuses: { 200: Webhook, ...errors(404) } },
  { method: "PUT", path: "/v1/webhooks/{id}", statuses: { 200: Webhook, ...errors(404, 422) } },
  { method: "DELETE", path: "/v1/webhooks/{id}", statuses: { 204: undefined, ...errors(404) } },
  {
    method: "POST",
    path: "/v1/webhooks/{id}/regenerate-secret",
    // The description shows no schema; the guides say the answer carries the new secret.
    statuses: { 200: Webhook.extend({ secret: z.string() }).strict(), ...errors(404) },
  },
  { method: "GET", path: "/v1/webhooks/{id}/deliveries", statuses: { 200: listOf(WebhookDelivery), ...errors(404) } },
  { method: "GET", path: "/v1/partners/plans", statuses: { 200: z.array(Plan), ...errors(401) } },
  {
    method: "GET",
    path: "/v1/partners/subscriptions",
    statuses: { 200: z.array(Subscription), ...errors(401, 403, 422) },
  },
  {
    method: "POST",
    path: "/v1/partners/subscriptions/assign",
    statuses: { 201: Subscription, ...errors(400, 401, 403, 404, 409) },
  },
  {
    method: "POST",
    path: "/v1/partners/subscriptions/{subscriptionId}",
    statuses: { 200: Subscription, ...errors(401, 403, 404, 422) },
  },
  {
    method: "POST",
    path: "/v1/partners/subscriptions/{subscriptionId}/renew",
    statuses: { 200: Subscription, ...errors(400, 401, 403, 404, 422) },
  },
  {
    method: "POST",
    path: "/v1/partners/subscriptions/{subscriptionId}/cancel",
    statuses: { 200: Subscription, ...errors(401, 403, 404, 422) },
  },
  // The description shows no body for the invitation's and the revocation's 200.
  { method: "POST", path: "/v1/users/invite", statuses: { 200: z.unknown(), ...errors(400, 401, 403) } },
  {
    method: "GET",
    path: "/v1/users/{userId}",
    statuses: { 200: UserBasicInfo, ...errors(400, 401, 403, 404) },
  },
  {
    method: "POST",
    path: "/v1/users/revoke-organization-access",
    statuses: { 200: z.unknown(), ...errors(400, 401, 403, 404) },
  },
  // The description shows no body for the refusals; the emulator sends its ErrorResponse as everywhere else.
  { method: "GET", path: "/v1/audit-log", statuses: { 200: AuditLogPage, ...errors(400, 401, 403) } },
  // The description shows no body for these refusals either.
  {
    method: "POST",
    path: "/v1/dmarc/rua/auth-pass-rates",
    request: PassRateDataRequest,
    statuses: { 200: z.object({ data: z.array(PassRate), meta: ReportPageMeta }).strict(), ...errors(401, 422) },
  },
  {
    method: "POST",
    path: "/v1/dmarc/rua/volume-history",
    request: ReportsForPeriodRequest,
    statuses: {
      200: z.object({ data: z.array(DmarcReportVolumePerPeriod), meta: ReportPageMeta }).strict(),
      ...errors(401, 422),
    },
  },
  {
    method: "POST",
    path: "/v1/domains/overview",
    request: DomainsOverviewRequest,
    statuses: { 200: listOf(DomainOverview), ...errors(422) },
  },
];

function templateToPattern(path: string): RegExp {
  const escaped = path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+");
  return new RegExp(`^${escaped}$`);
}

const MATCHERS = PUBLISHED_ROUTES.map((route) => ({ route, pattern: templateToPattern(route.path) }));

/** The published route a request went to; literal paths win over templates (`/assign` over `/{subscriptionId}`). */
export function publishedRouteOf(method: string, path: string): PublishedRoute | undefined {
  const candidates = MATCHERS.filter(({ route, pattern }) => route.method === method && pattern.test(path));
  candidates.sort((a, b) => b.route.path.split("{").length - a.route.path.split("{").length);
  return candidates.at(-1)?.route;
}
