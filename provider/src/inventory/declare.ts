import * as pulumi from "@pulumi/pulumi";
import type { Plan } from "../api";
import { getPlans } from "../functions/plans";
import { Rfc2136Record } from "../resources/rfc2136Record";
import { type PlannedObject, type TenantDeclaration, type TenantPlan, tenantPlan } from "../tenant/plan";
import { type PublishRecord, priceIdFor, Tenant, type TenantArgs, type VerifyDomain } from "../tenant/tenant";
import {
  type DnsPublishing,
  domainPolicyEntryOf,
  type Inventory,
  InventoryError,
  type InventoryTenant,
} from "./inventory";
import { loadPublisher } from "./publisher";

export interface DeclareOptions {
  /** The partner's catalogue; default one `getPlans()` for all tenants. */
  plans?: pulumi.Input<Plan[]>;
  /** Publishes the records of the domains whose `dns` (the domain's, else the tenant's) the file leaves unsaid. */
  publishRecord?: PublishRecord;
  verifyDomain?: VerifyDomain;
  /** Options of every Tenant component, e.g. a DNS provider or `protect`. */
  opts?: pulumi.ComponentResourceOptions;
}

/** Where a message about the tenant points: `tenants.yaml: tenant "Acme" (tenants[1])`. */
function labelOf(inventory: Inventory, tenant: InventoryTenant): string {
  return `${inventory.source}: ${tenant.label}`;
}

/** The tenant's plan, as the Tenant and the catalogue check take it; none with `subscription: none`. */
function planOf(tenant: InventoryTenant): TenantPlan | undefined {
  if (tenant.plan === undefined || tenant.subscription === "none") return undefined;
  return { name: tenant.plan, frequency: tenant.frequency, ...(tenant.currency ? { currency: tenant.currency } : {}) };
}

/** What the inventory entry declares, as the tenant plan takes it. */
export function declarationOf(tenant: InventoryTenant): TenantDeclaration {
  const plan = planOf(tenant);
  return {
    name: tenant.name,
    group: tenant.group,
    ...(tenant.groups.length > 0 ? { groups: tenant.groups } : {}),
    ...(plan ? { plan } : {}),
    ...(tenant.subscription === "active" ? {} : { subscription: tenant.subscription }),
    // How a record is published, and its policy, are the inventory's own: the Domain knows neither.
    domains: tenant.domains.map(({ dns: _publishing, policy: _policy, ...domain }) => domain),
    admins: tenant.admins,
    webhooks: tenant.webhooks,
    onDelete: tenant.onDelete,
    ...(tenant.ids ? { existingIds: tenant.ids } : {}),
  };
}

/** The objects the inventory entry declares: the plan its Tenant registers. */
export function inventoryTenantPlan(inventory: Inventory, tenant: InventoryTenant): PlannedObject[] {
  return tenantPlan(tenant.key, declarationOf(tenant), labelOf(inventory, tenant));
}

/** The domain's record as an `Rfc2136Record`, signed with the key whose secret the named environment variable holds. */
function rfc2136RecordOf(
  inventory: Inventory,
  tenant: InventoryTenant,
  publishing: Extract<DnsPublishing, { rfc2136: unknown }>,
  ...[record, , opts, domainName]: Parameters<PublishRecord>
): Rfc2136Record {
  const { keySecretEnv, ...settings } = publishing.rfc2136;
  const secret = process.env[keySecretEnv];
  if (!secret) {
    throw new InventoryError([
      `${labelOf(inventory, tenant)} dns.rfc2136.keySecretEnv: the environment variable ${keySecretEnv}, which must hold the TSIG key's secret for ${domainName}, is not set`,
    ]);
  }
  return new Rfc2136Record(
    `${domainName}/dns-record`,
    { ...settings, name: record.host, type: record.recordType, value: record.value, keySecret: pulumi.secret(secret) },
    opts,
  );
}

/** The record as the module the file names publishes it; a module that cannot serve stops the preview naming the tenant. */
function publishedByModule(
  inventory: Inventory,
  tenant: InventoryTenant,
  publishing: Extract<DnsPublishing, { publisher: unknown }>,
  ...args: Parameters<PublishRecord>
): pulumi.Resource | undefined {
  try {
    return loadPublisher(inventory.folder, publishing.publisher)(...args);
  } catch (error) {
    throw new InventoryError([`${labelOf(inventory, tenant)} dns.publisher: ${(error as Error).message}`]);
  }
}

/**
 * Publishes each domain's record as the inventory says (`dns`: the domain's,
 * else the tenant's): an `Rfc2136Record` for `rfc2136`, the named module's
 * `publishRecord` for `publisher`, nothing for `none`; a domain the file
 * says nothing of goes to `hook`, the program's `publishRecord`. Undefined
 * when no domain is published.
 */
function inventoryPublisher(
  inventory: Inventory,
  tenant: InventoryTenant,
  hook: PublishRecord | undefined,
): PublishRecord | undefined {
  const publishing = new Map(tenant.domains.map((domain) => [domain.name, domain.dns ?? tenant.dns]));
  const words = [...publishing.values()];
  const byFile = words.some((dns) => dns !== undefined && dns !== "none");
  const byHook = hook !== undefined && words.some((dns) => dns === undefined);
  if (!byFile && !byHook) return undefined;
  return (...args) => {
    const dns = publishing.get(args[3]);
    if (dns === undefined) return hook?.(...args);
    if (dns === "none") return undefined;
    if ("publisher" in dns) return publishedByModule(inventory, tenant, dns, ...args);
    return rfc2136RecordOf(inventory, tenant, dns, ...args);
  };
}

/** The Tenant arguments of an inventory entry. */
export function tenantArgs(inventory: Inventory, tenant: InventoryTenant, options: DeclareOptions = {}): TenantArgs {
  const { plans, verifyDomain } = options;
  const publishRecord = inventoryPublisher(inventory, tenant, options.publishRecord);
  const declaration = declarationOf(tenant);
  // The ramp reaches the Tenant, which stages the record: `records` and every publisher see the stage.
  const domains = declaration.domains?.map((domain) => {
    const policy = domainPolicyEntryOf(tenant, domain.name);
    return policy ? { ...domain, policy } : domain;
  });
  return {
    ...declaration,
    ...(domains ? { domains } : {}),
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
    const plan = planOf(tenant);
    if (plan === undefined) continue;
    try {
      priceIdFor(plans, plan, labelOf(inventory, tenant));
    } catch (error) {
      problems.push((error as Error).message);
    }
  }
  if (problems.length > 0) throw new InventoryError(problems);
}
