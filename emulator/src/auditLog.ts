import { AUDITED_ACTIONS, type AuditedAction } from "./auditActions";
import { now } from "./context";
import { newId } from "./ids";
import type { Store } from "./store";

// The organisation's audit log: the emulator files the partner's writes under
// the actions and categories the description lists. Webhooks, organisation
// names and a domain's settings have no action there, so they leave no entry.

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
