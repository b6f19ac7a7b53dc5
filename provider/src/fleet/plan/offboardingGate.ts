import type { InventoryTombstone } from "../../inventory/inventory";
import type { TenantOnDelete } from "../../tenant/tenant";
import type { HeldObject, TenantHolding } from "../shard/tenantHoldings";

// A tenant deployed in a shard but missing from the inventory is a question,
// not an order: the run offboards it only when the inventory tombstones it
// or the command line names it, never more of them than the fleet's limit,
// and never from an inventory that lists no tenant at all.

/** Offboardings one run may carry out unless `--max-offboard` says otherwise. */
export const DEFAULT_MAX_OFFBOARD = 5;

/** A tenant deployed in a shard that the inventory no longer lists. */
export interface LeavingTenant {
  key: string;
  shard: string;
  /** What the shard's state holds of it; undefined when the scan found none. */
  holding: TenantHolding | undefined;
}

export interface OffboardingRules {
  /** The inventory's `offboard:` entries. */
  tombstones: readonly InventoryTombstone[];
  /** Keys the command line approves (`--allow-offboard`). */
  allowed: readonly string[];
  /** Most offboardings one run may carry out. */
  maxOffboard: number;
  /** Tenants the inventory lists. */
  inventoryTenants: number;
  /** The inventory's file name, for messages. */
  source: string;
  /** Why the tenant's objects must not be deleted, whatever the approvals: another stack records one (./ownership.ts). */
  deletionRefusal?: (tenant: LeavingTenant) => string | undefined;
}

export type Approval = "tombstone" | "--allow-offboard";

export interface OffboardingDecision extends LeavingTenant {
  approvedBy?: Approval;
  tombstone?: InventoryTombstone;
  /** Why the run leaves the tenant as it is; undefined when it offboards it. */
  refusal?: string;
}

/** What offboarding a tenant does on the service, by its `onDelete` as last deployed. */
export const OFFBOARDING_EFFECTS: Record<TenantOnDelete, { goes: string; irreversible: boolean }> = {
  delete: {
    goes: "its subscriptions are cancelled and the organisation is deleted with its domains, reports and settings",
    irreversible: true,
  },
  cancelSubscriptions: {
    goes: "its subscriptions are cancelled and its domains, group, webhooks and admin access removed; the organisation and its reports stay",
    irreversible: true,
  },
  keep: {
    goes: "nothing on the service: the fleet forgets the tenant and its organisation stays as it is",
    irreversible: false,
  },
};

/** What deleting one object of each type does; other packages' objects (a Cloudflare record...) are deleted. */
const DELETE_EFFECTS: Record<string, string> = {
  Organization: "deleted with its data",
  Subscription: "cancelled",
  Domain: "removed",
  DomainGroup: "deleted",
  Webhook: "deleted",
  Invitation: "access revoked",
  DomainVerification: "forgotten (nothing on the service)",
  Rfc2136Record: "removed from its zone",
};

/** What deleting the object does, given its tenant's `onDelete`. */
export function deleteEffect(object: Pick<HeldObject, "type" | "retained">, onDelete: TenantOnDelete): string {
  if (object.retained) return "kept (onDelete: keep)";
  if (object.type === "Organization" && onDelete === "cancelSubscriptions") return "kept, its subscriptions cancelled";
  return DELETE_EFFECTS[object.type] ?? "deleted";
}

/** Why the run refuses an offboarding; one entry per rule, in the order they are checked. */
const REFUSALS = {
  emptyInventory: (rules: OffboardingRules, deployed: number) =>
    `${rules.source} lists no tenants while the shards hold ${deployed}: a truncated or emptied inventory is never applied; to offboard every tenant, run dmarc-fleet destroy`,
  notApproved: (rules: OffboardingRules, tenant: LeavingTenant) =>
    `not in ${rules.source} and not approved: list it under offboard: in ${rules.source} or run with --allow-offboard ${tenant.key} to offboard it, or restore its entry to keep it`,
  overLimit: (rules: OffboardingRules, count: number) =>
    `${count} offboardings in one run, more than --max-offboard ${rules.maxOffboard}: raise it for a planned bulk offboarding`,
};

/**
 * Decides every leaving tenant of the run's shards: offboarded when its
 * inventory tombstones it or `allowed` names it, refused otherwise; every
 * one refused when the inventory lists no tenants, or when more are
 * approved than `maxOffboard`; and, whatever the approvals, one whose
 * objects another stack records.
 */
export function gateOffboarding(
  leaving: readonly LeavingTenant[],
  deployed: number,
  rules: OffboardingRules,
): OffboardingDecision[] {
  if (leaving.length === 0) return [];
  if (rules.inventoryTenants === 0)
    return leaving.map((tenant) => ({ ...tenant, refusal: REFUSALS.emptyInventory(rules, deployed) }));
  const tombstones = new Map(rules.tombstones.map((tombstone) => [tombstone.key, tombstone]));
  const decisions: OffboardingDecision[] = leaving.map((tenant) => {
    const tombstone = tombstones.get(tenant.key);
    const kept = rules.deletionRefusal?.(tenant);
    if (kept) return { ...tenant, ...(tombstone ? { tombstone } : {}), refusal: kept };
    if (tombstone) return { ...tenant, approvedBy: "tombstone", tombstone };
    if (rules.allowed.includes(tenant.key)) return { ...tenant, approvedBy: "--allow-offboard" };
    return { ...tenant, refusal: REFUSALS.notApproved(rules, tenant) };
  });
  const approved = decisions.filter((decision) => decision.refusal === undefined).length;
  if (approved <= rules.maxOffboard) return decisions;
  return decisions.map((decision) =>
    decision.refusal === undefined ? { ...decision, refusal: REFUSALS.overLimit(rules, approved) } : decision,
  );
}
