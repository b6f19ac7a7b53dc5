import type { DmarcClient } from "../../client";
import { clientFrom, type ProviderSettings } from "../../runtime/config";
import { organizationIdsOf } from "../plan/scan";
import type { ShardState } from "../shard/shard";
import type { UnmanagedOrganizations } from "./findings";

/**
 * The partner's organisations (the service's list, 100 a page) against the
 * ids the shards' states hold: those no shard manages are organisations
 * made outside the fleet, or kept by an offboarding with `onDelete: keep`.
 */
async function unmanagedOrganizations(
  client: DmarcClient,
  managedIds: ReadonlySet<string>,
): Promise<UnmanagedOrganizations> {
  const organizations = await client.listOrganizations();
  const unmanaged = organizations
    .filter((organization) => !managedIds.has(organization.id))
    .map((organization) => ({ id: organization.id, name: organization.name }))
    .sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
  return { managed: organizations.length - unmanaged.length, total: organizations.length, organizations: unmanaged };
}

/** The account's organisations that no shard's state holds (drift). */
export async function accountCensus(
  settings: ProviderSettings,
  states: ReadonlyMap<number, ShardState>,
): Promise<UnmanagedOrganizations> {
  const managed = new Set([...states.values()].flatMap(organizationIdsOf));
  return unmanagedOrganizations(clientFrom(settings), managed);
}
