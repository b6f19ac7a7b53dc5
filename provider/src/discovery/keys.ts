import { keyOf } from "../inventory/inventory";

// Tenant keys for discovered organisations, with the inventory's own rule
// (`keyOf`: the name in lower-case words joined by hyphens). A key names
// every resource of the tenant for good, so it must not depend on what else
// the account holds or on the order the service lists things in.

export interface NamedOrganization {
  id: string;
  name: string;
  createdAt: string;
}

export interface AssignedKey {
  key: string;
  /** Why the key is not the one the name gives; absent when it is. */
  note?: string;
}

/** Characters of the organisation id that tell apart two organisations whose names give one key. */
const ID_SUFFIX_LENGTH = 6;

function idKey(id: string): string {
  return keyOf({ name: id });
}

/**
 * The key of each organisation, by id. An organisation whose name gives no
 * key (no letters or digits) takes its id's. When several would get one key,
 * or it is taken already (`taken`: the inventory's tenants, the shards'),
 * the oldest organisation keeps it and each other one gets it followed by
 * the end of its own id (`acme-corp-5f3a9c`): the same key on every run.
 *
 * @param taken keys in use, with what holds each, for the notes
 */
export function assignKeys(
  organizations: readonly NamedOrganization[],
  taken: ReadonlyMap<string, string>,
): Map<string, AssignedKey> {
  const holders = new Map(taken);
  const oldestFirst = [...organizations].sort(
    (a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt) || a.id.localeCompare(b.id),
  );
  const assigned = new Map<string, AssignedKey>();
  for (const organization of oldestFirst) {
    const named = keyOf(organization);
    const base = named === "" ? idKey(organization.id) : named;
    const candidates = [
      base,
      `${base}-${idKey(organization.id).slice(-ID_SUFFIX_LENGTH)}`,
      `${base}-${idKey(organization.id)}`,
    ];
    const key = candidates.find((candidate) => !holders.has(candidate));
    if (key === undefined) throw new Error(`no free key for organisation ${organization.id}: ${candidates.join(", ")}`);
    const notes = [
      named === "" ? `the name gives no key (it has no letters or digits), so the id does` : undefined,
      key === base ? undefined : `"${base}" is taken by ${holders.get(base)}`,
    ].filter((note): note is string => note !== undefined);
    holders.set(key, `organisation "${organization.name}" (${organization.id})`);
    assigned.set(organization.id, notes.length === 0 ? { key } : { key, note: `key "${key}": ${notes.join("; ")}` });
  }
  return assigned;
}
