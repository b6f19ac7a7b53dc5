import type { AuditLogCategory } from "pulumi-dmarc-partner/api";
import { now } from "./context";
import { newId } from "./ids";
import type { Store } from "./store";

// The organisation's audit log: the emulator files the partner's writes under
// the actions and categories the description lists. Webhooks, organisation
// names and a domain's settings have no action there, so they leave no entry.

/** Each action the emulator files, with its category and the kind of thing it names. */
const AUDITED_ACTIONS = {
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

/** What an entry names: its label (a domain name, a group's name, an e-mail address) and id. */
export interface AuditedThing {
  label: string;
  id: string;
}

/** Files one write of the partner in the organisation's audit log. */
export function audit(
  store: Store,
  where: { partnerId: string; organizationId: string },
  action: AuditedAction,
  thing: AuditedThing,
): void {
  const { category, entityType } = AUDITED_ACTIONS[action];
  const id = newId("audit");
  store.auditLog.set(id, { id, ...where, action, category, entity: { ...thing, entityType }, at: now() });
}
