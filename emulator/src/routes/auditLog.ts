import { AuditLogPage, AuditLogQuery } from "pulumi-dmarc-partner/api";
import { organizationInScope } from "../access";
import type { AuditRecord } from "../auditActions";
import type { Context } from "../context";
import type { Partner } from "../partners";
import type { ApiRouter } from "../router";
import { conform, parseInput } from "../wire";

/** The description's default page size for this route. */
const DEFAULT_PAGE_SIZE = 20;

/** One entry as the description spells it: who (the partner's API client), from where, on what. */
function entryView(record: AuditRecord, partner: Partner) {
  return {
    id: record.id,
    user: { id: partner.id, email: `api@${partner.id}.invalid`, fullName: "API client", role: "Organization Owner" },
    date: record.at,
    actionDate: record.at,
    action: [record.action],
    entities: [record.entity],
    entity: [record.entity],
    country: { name: "Unknown", code: "ZZ" },
    ip: "127.0.0.1",
    platform: { os: "OTHER", browser: "OTHER", device: "OTHER" },
    os: "OTHER",
    browser: "OTHER",
    device: "OTHER",
  };
}

function matching(records: Iterable<AuditRecord>, query: AuditLogQuery): AuditRecord[] {
  const since = query.startDate === undefined ? Number.NEGATIVE_INFINITY : Date.parse(query.startDate);
  const until = query.endDate === undefined ? Number.POSITIVE_INFINITY : Date.parse(query.endDate);
  const found = [...records].filter((record) => {
    const at = Date.parse(record.at);
    return (
      record.organizationId === query.organizationId &&
      (query.actionCategories === undefined || query.actionCategories.includes(record.category)) &&
      at >= since &&
      at <= until
    );
  });
  return query.sortDirection === "ASC" ? found : found.reverse();
}

export function auditLogRoutes(router: ApiRouter, { store, profile }: Context): void {
  router.resource("GET", "/audit-log", ({ request, partner }) => {
    const query = parseInput(AuditLogQuery, request.query, "query");
    organizationInScope(store, profile, partner, query.organizationId);
    const found = matching(store.auditLog.values(), query);
    const pageSize = query.pageSize ?? DEFAULT_PAGE_SIZE;
    const page = query.page ?? 1;
    return conform(AuditLogPage, {
      data: found.slice((page - 1) * pageSize, page * pageSize).map((record) => entryView(record, partner)),
      totalCount: found.length,
      currentPage: page,
      totalPages: Math.ceil(found.length / pageSize),
    });
  });
}
