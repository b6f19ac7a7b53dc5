import type { AuditLogCategory } from "pulumi-dmarc-partner/api";

// What an audit-log entry is: the actions the description lists, each with
// its category, and the record the store keeps. Plain data, so the store can
// hold records without importing the audit log's filing.

/** Each action the emulator files, with its category and the kind of thing it names. */
export const AUDITED_ACTIONS = {
  DOMAIN_ADDED: { category: "DOMAINS", entityType: "domain" },
  DOMAIN_REMOVED: { category: "DOMAINS", entityType: "domain" },
  DOMAIN_MOVED_TO_GROUP: { category: "DOMAINS", entityType: "domain" },
  DOMAIN_GROUP_ADDED: { category: "DOMAIN_GROUPS", entityType: "domain_group" },
  DOMAIN_GROUP_REMOVED: { category: "DOMAIN_GROUPS", entityType: "domain_group" },
  DOMAIN_GROUP_NAME_EDITED: { category: "DOMAIN_GROUPS", entityType: "domain_group" },
  USER_INVITED_AS_ADMIN: { category: "USER_MANAGEMENT", entityType: "user" },
  USER_INVITED_AS_EDITOR: { category: "USER_MANAGEMENT", entityType: "user" },
  USER_INVITED_AS_VIEWER: { category: "USER_MANAGEMENT", entityType: "user" },
  USER_REVOKED_FROM_ORGANIZATION: { category: "USER_MANAGEMENT", entityType: "user" },
  PRODUCT_PLAN_UPGRADED: { category: "BILLING", entityType: "plan" },
  BILLING_CANCELLATION_REQUESTED: { category: "BILLING", entityType: "plan" },
  RENEWED_SUBSCRIPTION: { category: "BILLING", entityType: "plan" },
} as const satisfies Record<string, { category: AuditLogCategory; entityType: string }>;

export type AuditedAction = keyof typeof AUDITED_ACTIONS;

export interface AuditRecord {
  id: string;
  partnerId: string;
  organizationId: string;
  action: AuditedAction;
  category: AuditLogCategory;
  entity: { label: string; entityType: string; id: string };
  at: string;
}
