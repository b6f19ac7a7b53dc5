import { z } from "zod";
import { Timestamp } from "./common";

// `GET /v1/audit-log`, as the OpenAPI description publishes it (the guides do
// not mention it): what happened in one organisation, by action category.

/** The categories an action falls in; the description lists these fifteen. */
export const AuditLogCategory = z.enum([
  "DOMAINS",
  "DOMAIN_GROUPS",
  "MANAGED_SERVICES",
  "USER_MANAGEMENT",
  "BILLING",
  "SECURITY_FEATURES",
  "ORGANIZATION_SECURITY",
  "LOGIN_AND_LOGOUT",
  "INTEGRATIONS",
  "ALERTING",
  "RUF",
  "RUA",
  "PERSONAL_SETTINGS",
  "REPORTING",
  "LABEL_MANAGEMENT",
]);
export type AuditLogCategory = z.infer<typeof AuditLogCategory>;

/** A list filter, sent comma-separated or as the parameter repeated. */
const listFilter = <T extends z.ZodType>(item: T) =>
  z.preprocess(
    (value) => [value].flat().flatMap((part) => (typeof part === "string" ? part.split(",") : [part])),
    z.array(item),
  );

export const AuditLogQuery = z.object({
  organizationId: z.string().min(1),
  actionCategories: listFilter(AuditLogCategory).optional(),
  startDate: Timestamp.optional(),
  endDate: Timestamp.optional(),
  sortDirection: z.enum(["ASC", "DESC"]).optional(),
  page: z.coerce.number().int().positive().optional(),
  pageSize: z.coerce.number().int().positive().optional(),
});
export type AuditLogQuery = z.infer<typeof AuditLogQuery>;

/** One thing an entry names: the domain, the group, the user... */
export const AuditLogItem = z.object({
  label: z.string(),
  entityType: z.string(),
  id: z.string().optional(),
});
export type AuditLogItem = z.infer<typeof AuditLogItem>;

/**
 * One entry. The description requires thirteen fields (who, from where, on
 * which device); the client reads only when and what, so the rest may be
 * missing and unknown actions pass.
 */
export const AuditLogEntry = z.object({
  id: z.string(),
  date: Timestamp.optional(),
  actionDate: Timestamp.optional(),
  action: z.array(z.string()).optional(),
  entities: z.array(AuditLogItem).optional(),
});
export type AuditLogEntry = z.infer<typeof AuditLogEntry>;

/** A page of entries: `totalCount` for the whole query, `currentPage` of `totalPages`. */
export const AuditLogPage = z.object({
  data: z.array(AuditLogEntry),
  totalCount: z.number().int().nonnegative().optional(),
  currentPage: z.number().int().optional(),
  totalPages: z.number().int().nonnegative().optional(),
});
export type AuditLogPage = z.infer<typeof AuditLogPage>;
