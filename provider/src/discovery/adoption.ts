import type { Plan } from "../api";
import type { InventoryTenant } from "../inventory/inventory";
import { hostWithSettings } from "../providerHost";
import { definitionOf } from "../registry";
import type { ProviderSettings } from "../runtime/config";
import { type DynamicProviderHost, IMPORT_KEY } from "../runtime/host";
import { splitId } from "../runtime/ids";
import { priceIdFor } from "../tenant/tenant";

// Whether a tenant entry adopts cleanly, found the way `up` finds it, minus
// the engine: each resource the Tenant declares goes through the provider
// host's check (a preview's validation, no request); with `adopt`, through
// the host's create with the entry's id, which for an id only reads the
// object back and compares it with the declaration, as `up` does; then
// through the host's diff against what that adoption recorded, as the next
// preview does. Nothing is recorded anywhere, and a declaration without an
// id is reported instead of being created.

/** Which part of an entry declares a resource, so a failing domain or webhook can be left out alone. */
export type EntryPart = { kind: "tenant" } | { kind: "domain" | "webhook" | "admin"; name: string };

/** One resource a Tenant declares, with the inputs it gives it. */
export interface Declaration {
  typeName: string;
  /** What it is, in messages: `domain acme.example`. */
  what: string;
  part: EntryPart;
  inputs: Record<string, unknown>;
}

const TENANT: EntryPart = { kind: "tenant" };

function adopting(id: string | undefined): Record<string, string> {
  return id === undefined ? {} : { [IMPORT_KEY]: id };
}

type TenantIds = NonNullable<InventoryTenant["ids"]>;

/** The adopted organisation's id and the adopted group's own id, which the tenant's other resources name. */
interface Parents {
  organizationId: string;
  groupId: string;
}

function organizationAndGroup(tenant: InventoryTenant, ids: TenantIds, { organizationId }: Parents): Declaration[] {
  return [
    {
      typeName: "Organization",
      what: `organisation ${organizationId}`,
      part: TENANT,
      inputs: {
        name: tenant.name,
        onDelete: tenant.onDelete === "delete" ? "delete" : "cancelSubscriptions",
        ...adopting(ids.organization),
      },
    },
    {
      typeName: "DomainGroup",
      what: `domain group ${ids.group}`,
      part: TENANT,
      inputs: { organizationId, name: tenant.group, ...adopting(ids.group) },
    },
  ];
}

function subscription(ids: TenantIds, organizationId: string, priceId: string): Declaration {
  return {
    typeName: "Subscription",
    what: `subscription ${ids.subscription ?? "(no id)"}`,
    part: TENANT,
    inputs: { organizationId, priceId, ...adopting(ids.subscription) },
  };
}

function admins(tenant: InventoryTenant, ids: TenantIds, organizationId: string): Declaration[] {
  return tenant.admins.map((email) => ({
    typeName: "Invitation",
    what: `admin ${email}`,
    part: { kind: "admin", name: email },
    inputs: { organizationId, email, role: "admin", ...adopting(ids.admins?.[email]) },
  }));
}

function webhooks(tenant: InventoryTenant, ids: TenantIds, organizationId: string): Declaration[] {
  return tenant.webhooks.map((webhook) => ({
    typeName: "Webhook",
    what: `webhook "${webhook.name}"${ids.webhooks?.[webhook.name] ? ` (${ids.webhooks[webhook.name]})` : ""}`,
    part: { kind: "webhook", name: webhook.name },
    inputs: {
      name: webhook.name,
      url: webhook.url,
      events: webhook.events,
      ownerId: organizationId,
      ...adopting(ids.webhooks?.[webhook.name]),
    },
  }));
}

function domains(tenant: InventoryTenant, ids: TenantIds, { organizationId, groupId }: Parents): Declaration[] {
  return tenant.domains.map((domain) => ({
    typeName: "Domain",
    what: `domain ${domain.name}`,
    part: { kind: "domain", name: domain.name },
    inputs: {
      organizationId,
      domain: domain.name,
      groupId,
      type: domain.type,
      ...(domain.setupRecordType ? { setupRecordType: domain.setupRecordType } : {}),
      ...(domain.zone ? { zone: domain.zone } : {}),
      ...adopting(ids.domains?.[domain.name]),
    },
  }));
}

/**
 * The resources a Tenant declares for an inventory entry with its
 * organisation's and group's ids, each with the inputs the Tenant's
 * constructor gives it; the organisation and group ids are the adopted
 * objects'. Fails with a `TenantError` when the catalogue cannot price the
 * entry's plan.
 */
export function tenantDeclarations(tenant: InventoryTenant, plans: readonly Plan[], label: string): Declaration[] {
  const ids = tenant.ids ?? {};
  if (ids.organization === undefined || ids.group === undefined) {
    throw new Error(`${label}: ids.organization and ids.group are needed to check an adoption`);
  }
  const parents: Parents = {
    organizationId: ids.organization,
    groupId: splitId(ids.group, "DomainGroup", "groupId").child,
  };
  const priceId = priceIdFor(
    plans,
    { name: tenant.plan, frequency: tenant.frequency, ...(tenant.currency ? { currency: tenant.currency } : {}) },
    label,
  );
  return [
    ...organizationAndGroup(tenant, ids, parents),
    subscription(ids, parents.organizationId, priceId),
    ...admins(tenant, ids, parents.organizationId),
    ...webhooks(tenant, ids, parents.organizationId),
    ...domains(tenant, ids, parents),
  ];
}

/** A provider host of its own, configured with the settings a shard's provider would get. */
export async function adoptionHost(settings: ProviderSettings): Promise<DynamicProviderHost> {
  return hostWithSettings(settings);
}

/**
 * What stands in the way of one declaration, in the host's words: its
 * inputs' check failures; with `adopt`, also an adoption that fails (the
 * object is gone or differs from the declaration) or that the next preview
 * would change.
 */
export async function declarationProblems(
  host: DynamicProviderHost,
  declaration: Declaration,
  adopt: boolean,
): Promise<string[]> {
  const { typeName, inputs } = declaration;
  const checked = await host.check(typeName, {}, inputs);
  if (checked.failures && checked.failures.length > 0) {
    return checked.failures.map((failure) => failure.reason);
  }
  if (!adopt) return [];
  if (typeof inputs[IMPORT_KEY] !== "string") return ["it has no id, so up would create it"];
  const news = checked.inputs ?? inputs;
  try {
    // With an id, the host's create is its adoption: a read and a comparison, nothing sent that changes anything.
    const adopted = await host.create(typeName, news);
    const outs = adopted.outs ?? {};
    if (!(await host.diff(typeName, adopted.id, outs, news)).changes) return [];
    const drifted = definitionOf(typeName)?.drift?.(outs) ?? [];
    return [
      `it adopts, but the next preview would change it${drifted.length > 0 ? ` (${drifted.join(", ")} drifted)` : ""}`,
    ];
  } catch (error) {
    return [error instanceof Error ? error.message : String(error)];
  }
}
