import { resourceName, type StateResource } from "../../checkpoint/deployment";
import { dmarcTypeName } from "../../runtime/typeToken";
import { EXAMPLE_TENANT_TYPE, TENANT_TYPE, type TenantOnDelete } from "../../tenant/tenant";

// What a shard's state holds of each tenant: the objects a run would delete
// when the tenant leaves, what its `onDelete` was when last deployed, and
// its organisation's id for the account's census.

/** One object of a tenant as the state records it. */
export interface HeldObject {
  /** `Organization`, `Domain`...; another package's full type token. */
  type: string;
  /** The resource name: `acme`, `acme/group`, `acme.example`. */
  name: string;
  /** The object's id on the service. */
  id?: string;
  /** Its delete leaves the object on the service (`onDelete: keep`). */
  retained: boolean;
  /** When the engine created it, as the state records it. */
  created?: string;
  /** A Domain's setup record, as its outputs hold it: what the customer publishes when the fleet does not. */
  setupRecord?: HeldRecord;
}

interface HeldRecord {
  host: string;
  type: string;
  value: string;
}

function heldRecordOf(resource: StateResource): HeldRecord | undefined {
  const record = resource.outputs?.setupRecord as Partial<HeldRecord> | undefined;
  if (typeof record?.host !== "string" || typeof record.value !== "string") return undefined;
  return { host: record.host, type: String(record.type ?? "txt").toUpperCase(), value: record.value };
}

export interface TenantHolding {
  /** Every URN of the tenant, its component's first: what a run leaves out when its offboarding is refused. */
  urns: string[];
  objects: HeldObject[];
  organizationId?: string;
  onDelete: TenantOnDelete;
}

/** Whether the type is the Tenant component's, or the one its stacks from the example still record. */
export function isTenantType(type: string): boolean {
  return type === TENANT_TYPE || type === EXAMPLE_TENANT_TYPE;
}

/** The type of the URN's own resource: the last part of its `$`-joined type chain. */
function urnType(urn: string): string {
  const qualified = urn.split("::")[2] ?? "";
  return qualified.slice(qualified.lastIndexOf("$") + 1);
}

/** `Organization` for this package's resources, the type token for any other. */
export function shortType(type: string): string {
  return dmarcTypeName(type) ?? type;
}

/** How far up the parent chain a tenant's component is looked for; the chains of a Tenant are one or two long. */
const MAX_DEPTH = 32;

/**
 * The key of the tenant a resource belongs to: its own name for a Tenant
 * component, else the name of its nearest Tenant ancestor; undefined for
 * the stack, providers and anything outside a tenant.
 */
export function tenantKeyOf(urn: string, parentOf: (urn: string) => string | undefined): string | undefined {
  let current: string | undefined = urn;
  for (let depth = 0; current && depth < MAX_DEPTH; depth++) {
    if (isTenantType(urnType(current))) return resourceName(current);
    current = parentOf(current);
  }
  return undefined;
}

function onDeleteOf(organization: StateResource | undefined): TenantOnDelete {
  if (organization?.retainOnDelete === true) return "keep";
  const declared = organization?.inputs?.onDelete ?? organization?.outputs?.onDelete;
  return declared === "cancelSubscriptions" ? "cancelSubscriptions" : "delete";
}

/** Each tenant's holding in a shard's state, by tenant key. */
export function tenantHoldingsOf(resources: readonly StateResource[]): Record<string, TenantHolding> {
  const parents = new Map(resources.map((resource) => [resource.urn, resource.parent]));
  const members = new Map<string, StateResource[]>();
  for (const resource of resources) {
    const key = tenantKeyOf(resource.urn, (urn) => parents.get(urn) || undefined);
    if (key !== undefined && resource.delete !== true) members.set(key, [...(members.get(key) ?? []), resource]);
  }
  const holdings: Record<string, TenantHolding> = {};
  for (const [key, held] of members) {
    const custom = held.filter((resource) => resource.custom === true);
    const organization = custom.find((resource) => dmarcTypeName(resource.type) === "Organization");
    holdings[key] = {
      urns: [...held].sort((a, b) => Number(isTenantType(b.type)) - Number(isTenantType(a.type))).map((r) => r.urn),
      objects: custom.map((resource) => ({
        type: shortType(resource.type),
        name: resourceName(resource.urn),
        ...(resource.id ? { id: resource.id } : {}),
        retained: resource.retainOnDelete === true,
        ...(typeof resource.created === "string" ? { created: resource.created } : {}),
        ...(heldRecordOf(resource) ? { setupRecord: heldRecordOf(resource) } : {}),
      })),
      ...(organization?.id ? { organizationId: organization.id } : {}),
      onDelete: onDeleteOf(organization),
    };
  }
  return holdings;
}
