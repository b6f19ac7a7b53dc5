import type { Organization } from "../api";
import type { Inventory } from "../inventory/inventory";
import { type AssignedKey, assignKeys } from "./keys";
import type { ManagedOrganization } from "./report";

// Which of the account's organisations an import reads, and in which
// order: those neither the inventory nor a shard holds, in key order.

/** What an import adds to: the inventory it appends to and what the fleet's shards hold, each optional. */
export interface ImportScope {
  existing?: { inventory: Inventory };
  /** Organisations and tenant keys the fleet's shards hold, each with its shard's name. */
  deployed?: { organizations: ReadonlyMap<string, string>; keys: ReadonlyMap<string, string> };
}

/** Organisations the inventory or the fleet holds already, and the others: only those are read further. */
export function splitManaged(
  organizations: readonly Organization[],
  options: ImportScope,
): { managed: ManagedOrganization[]; fresh: Organization[] } {
  const holders = new Map<string, string>(options.deployed?.organizations ?? []);
  for (const tenant of options.existing?.inventory.tenants ?? []) {
    if (tenant.ids?.organization) holders.set(tenant.ids.organization, `tenant "${tenant.key}" of the inventory`);
  }
  const managed: ManagedOrganization[] = [];
  const fresh: Organization[] = [];
  for (const organization of organizations) {
    const by = holders.get(organization.id);
    if (by === undefined) fresh.push(organization);
    else managed.push({ organizationId: organization.id, name: organization.name, by });
  }
  return { managed, fresh };
}

/** Keys in use: the inventory's tenants' and those in the shards' state. */
function takenKeys(options: ImportScope): Map<string, string> {
  const taken = new Map<string, string>();
  for (const [key, shard] of options.deployed?.keys ?? []) taken.set(key, `a tenant of shard ${shard}`);
  for (const tenant of options.existing?.inventory.tenants ?? []) taken.set(tenant.key, "a tenant of the inventory");
  return taken;
}

/** An organisation the import has come to, with the key it gets. */
export interface KeyedOrganization {
  organization: Organization;
  key: AssignedKey;
}

/**
 * The new organisations with their keys, in key order: the order their
 * entries are written in. Keys depend on the organisations' names, ages and
 * ids alone, so an import that continues one cut short gives the same ones.
 */
export function inKeyOrder(fresh: readonly Organization[], options: ImportScope): KeyedOrganization[] {
  const keys = assignKeys(fresh, takenKeys(options));
  return fresh
    .map((organization) => {
      const key = keys.get(organization.id);
      if (!key) throw new Error(`no key was assigned to organisation ${organization.id}`);
      return { organization, key };
    })
    .sort((a, b) => a.key.key.localeCompare(b.key.key));
}

/** Who lists each domain so far, for the messages: the inventory's tenants, then the new ones as they come. */
export function domainOwners(existing: Inventory | undefined): Map<string, string> {
  const owners = new Map<string, string>();
  for (const tenant of existing?.tenants ?? []) {
    for (const domain of tenant.domains) owners.set(domain.name, `tenant "${tenant.key}" of the inventory`);
  }
  return owners;
}
