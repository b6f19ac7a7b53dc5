import * as pulumi from "@pulumi/pulumi";
import type { Plan } from "../api";
import { getPlans } from "../functions/plans";
import {
  type PublishRecord,
  priceIdFor,
  Tenant,
  type TenantArgs,
  type TenantPlan,
  type VerifyDomain,
} from "../tenant/tenant";
import { type Inventory, InventoryError, type InventoryTenant } from "./inventory";

export interface DeclareOptions {
  /** The partner's catalogue; default one `getPlans()` for all tenants. */
  plans?: pulumi.Input<Plan[]>;
  publishRecord?: PublishRecord;
  verifyDomain?: VerifyDomain;
  /** Options of every Tenant component, e.g. a DNS provider or `protect`. */
  opts?: pulumi.ComponentResourceOptions;
}

/** Where a message about the tenant points: `tenants.yaml: tenant "Acme" (tenants[1])`. */
function labelOf(inventory: Inventory, tenant: InventoryTenant): string {
  return `${inventory.source}: ${tenant.label}`;
}

/** The tenant's plan, as the Tenant and the catalogue check take it. */
function planOf(tenant: InventoryTenant): TenantPlan {
  return { name: tenant.plan, frequency: tenant.frequency, ...(tenant.currency ? { currency: tenant.currency } : {}) };
}

/** The Tenant arguments of an inventory entry. */
export function tenantArgs(inventory: Inventory, tenant: InventoryTenant, options: DeclareOptions = {}): TenantArgs {
  const { plans, publishRecord, verifyDomain } = options;
  return {
    name: tenant.name,
    group: tenant.group,
    plan: planOf(tenant),
    domains: tenant.domains,
    admins: tenant.admins,
    webhooks: tenant.webhooks,
    onDelete: tenant.onDelete,
    ...(tenant.ids ? { existingIds: tenant.ids } : {}),
    ...(plans ? { plans } : {}),
    ...(publishRecord ? { publishRecord } : {}),
    ...(verifyDomain ? { verifyDomain } : {}),
    label: labelOf(inventory, tenant),
  };
}

/**
 * Declares every tenant of the inventory (or those `keys` names). The
 * catalogue is fetched once for all of them; a plan it does not have fails
 * that tenant's subscription with the file, the tenant and `plan` named.
 */
export function declareTenants(
  inventory: Inventory,
  options: DeclareOptions = {},
  keys?: ReadonlySet<string>,
): Tenant[] {
  const plans = pulumi.output(options.plans ?? getPlans());
  return inventory.tenants
    .filter((tenant) => keys === undefined || keys.has(tenant.key))
    .map((tenant) => new Tenant(tenant.key, tenantArgs(inventory, tenant, { ...options, plans }), options.opts));
}

/** Every tenant whose plan, frequency or currency the catalogue lacks, at once: for a runner to refuse before it starts. */
export function checkPlans(inventory: Inventory, plans: readonly Plan[]): void {
  const problems: string[] = [];
  for (const tenant of inventory.tenants) {
    try {
      priceIdFor(plans, planOf(tenant), labelOf(inventory, tenant));
    } catch (error) {
      problems.push((error as Error).message);
    }
  }
  if (problems.length > 0) throw new InventoryError(problems);
}
