import type { BackendDeclarations, Declaration, Recorder } from "../../checkpoint/backendRecords";
import { resourceName } from "../../checkpoint/deployment";
import { shellWord } from "../../cli/shown";
import type { Inventory, InventoryTenant } from "../../inventory/inventory";
import type { ShardState } from "../shard/shard";
import type { TenantHolding } from "../shard/tenantHoldings";

// Which stack a customer belongs to. The service gives an organisation no
// owner, tag or idempotency key, so the backend's stacks are the only
// record: a customer declared in two places lets one stack's recovery adopt,
// and its destroy delete, the other's organisation. So a tenant whose key or
// organisation name another stack of the backend declares (another fleet's
// shard, another project's stack, a program's), or that two of this fleet's
// shards hold, is refused before any write, naming both places; and no
// offboarding deletes an object another stack records.

/** Who holds what on the fleet's backend: the fleet's own shards, and every other stack. */
export interface Ownership {
  fleet: string;
  /** The fleet's shards, as the scan read them. */
  states: ReadonlyMap<number, ShardState>;
  /** What every other stack of the backend declares and records. */
  elsewhere: BackendDeclarations;
}

/** Tenants declared in two places: refused before any write; each line names both places and the way out. */
export class OwnershipConflict extends Error {
  override name = "OwnershipConflict";
  constructor(readonly conflicts: readonly string[]) {
    super(
      [
        `refused before any write: ${conflicts.length} tenant(s) declared in two places on this backend, where one stack's recovery could adopt, and its destroy delete, the other's organisation:`,
        ...conflicts.map((conflict) => `  ${conflict}`),
        'Declare each customer in one place: remove the entry from one inventory (that fleet offboards it; with onDelete: keep it only forgets it), or give two different customers different names. docs/guides/fleets.md, "A customer in one place".',
      ].join("\n"),
    );
  }
}

/** `stack proj/red-001 (a shard of fleet red)`: another stack as the backend names it, with its fleet when it is a shard. */
export function describeStack(name: string): string {
  const short = name.slice(name.lastIndexOf("/") + 1);
  const shard = /^(.+)-\d{3,}$/.exec(short);
  return `stack ${name}${shard ? ` (a shard of fleet ${shard[1]})` : ""}`;
}

function describeDeclaration(kind: string, declaration: Declaration): string {
  const what = `${kind} ${resourceName(declaration.urn)}${declaration.id ? ` (${declaration.id})` : ""}`;
  return `${describeStack(declaration.stack)} declares ${declaration.pending ? `a create left pending of ${what}` : what}`;
}

/** Where else than this inventory the backend declares the tenant: by its key, its organisation's name or the id it adopts. */
function declaredElsewhere(tenant: InventoryTenant, elsewhere: BackendDeclarations): string[] {
  const adopted = tenant.ids?.organization;
  const recorder = adopted === undefined ? undefined : elsewhere.recordedBy.get(adopted);
  return [
    ...(elsewhere.tenants.get(tenant.key) ?? []).map((declaration) => describeDeclaration("Tenant", declaration)),
    ...(elsewhere.organizations.get(tenant.name) ?? []).map(
      (declaration) => `${describeDeclaration("Organization", declaration)} named "${tenant.name}"`,
    ),
    ...(recorder
      ? [`${describeStack(recorder.stack)} records its ids.organization ${adopted} as ${recorder.urn}`]
      : []),
  ];
}

/** The fleet's shards whose state holds the tenant, when more than one does. */
function heldTwice(key: string, { fleet, states }: Ownership): string | undefined {
  const holders = [...states.values()].filter((state) => state.tenants.includes(key)).map((state) => state.name);
  return holders.length > 1
    ? `shards ${holders.join(" and ")} of fleet ${fleet} both hold it: keep it in one, and forget it in the other (pulumi state delete --stack <shard> --target-dependents '<its Tenant URN>', in .dmarc-fleet/work/<shard>)`
    : undefined;
}

/**
 * Refuses the run, before any write, when a tenant of the inventory is
 * declared in another place too: another stack of the backend declares its
 * key or its organisation's name (a pending create of one included), or
 * records the organisation it adopts, or two of the fleet's shards hold it.
 */
export function checkDeclarations(inventory: Inventory, ownership: Ownership): void {
  const conflicts = inventory.tenants.flatMap((tenant) => {
    const places = [...declaredElsewhere(tenant, ownership.elsewhere), heldTwice(tenant.key, ownership) ?? []].flat();
    return places.length > 0
      ? [`${inventory.source}: tenant ${tenant.key} ("${tenant.name}"): ${places.join("; ")}`]
      : [];
  });
  if (conflicts.length > 0) throw new OwnershipConflict(conflicts);
}

/** Each id the fleet's shards record, with the shard, but those of `shard` itself. */
function recordedByOtherShards(ownership: Ownership, shard: string): Map<string, Recorder> {
  const recorded = new Map<string, Recorder>();
  for (const state of ownership.states.values()) {
    if (state.name === shard) continue;
    for (const holding of Object.values(state.holdings))
      for (const object of holding.objects)
        if (object.id) recorded.set(object.id, { stack: state.name, urn: `its ${object.type} ${object.name}` });
  }
  return recorded;
}

/** The command that forgets a tenant in a shard's state, its objects left on the service as they are. */
function forgetCommand(shard: string, holding: TenantHolding): string {
  return `pulumi state delete --stack ${shard} --target-dependents ${shellWord(holding.urns[0] ?? "")} (in .dmarc-fleet/work/${shard})`;
}

/**
 * Why the shard must not delete this tenant's objects (offboarding it, or
 * destroying the shard), or undefined when it may: another stack records
 * one of the objects its `onDelete` would delete or change, so the customer
 * may be that stack's; or stacks of the backend could not be read, so that
 * cannot be ruled out. `onDelete: keep` touches nothing on the service.
 */
export function deletionRefusal(
  ownership: Ownership,
  shard: string,
  holding: TenantHolding | undefined,
): string | undefined {
  if (!holding || holding.onDelete === "keep") return undefined;
  const { unreadable, recordedBy } = ownership.elsewhere;
  if (unreadable.length > 0) {
    return `stacks of the backend could not be read, so whether they record its organisation cannot be ruled out: ${unreadable.join("; ")}`;
  }
  const shards = recordedByOtherShards(ownership, shard);
  for (const object of holding.objects) {
    const recorder = object.id && !object.retained ? (recordedBy.get(object.id) ?? shards.get(object.id)) : undefined;
    if (recorder) {
      return `its ${object.type} ${object.name} (${object.id}) is recorded by ${describeStack(recorder.stack)} too, as ${recorder.urn}: deleting it could delete that stack's customer. If the customer is that stack's, forget the tenant in ${shard}: ${forgetCommand(shard, holding)}`;
    }
  }
  return undefined;
}
