import type { Plan } from "../api";
import { hostWithSettings } from "../providerHost";
import { definitionOf } from "../registry";
import type { ProviderSettings } from "../runtime/config";
import { type DynamicProviderHost, IMPORT_KEY } from "../runtime/host";
import { splitId } from "../runtime/ids";
import { type EntryPart, OutputOf, type PlannedObject, PriceOf } from "../tenant/plan";
import { priceIdFor } from "../tenant/tenant";

// Whether a tenant entry adopts cleanly, found the way `up` finds it, minus
// the engine: each object of the tenant plan (the list the Tenant registers) goes through the provider
// host's check (a preview's validation, no request); with `adopt`, through
// the host's create with the entry's id, which for an id only reads the
// object back and compares it with the declaration, as `up` does; then
// through the host's diff against what that adoption recorded, as the next
// preview does. Nothing is recorded anywhere, and a declaration without an
// id is reported instead of being created.

/** One resource a Tenant declares, with the inputs its adoption gives it. */
export interface Declaration {
  typeName: string;
  /** What it is, in messages: `domain acme.example`. */
  what: string;
  part: EntryPart;
  inputs: Record<string, unknown>;
}

/** What an output a plan refers to is, from the object's id: the organisation's id, a group's own id. */
export const OUTPUTS_FROM_ID: Record<OutputOf["output"], (id: string) => string> = {
  organizationId: (id) => id,
  groupId: (id) => splitId(id, "DomainGroup", "groupId").child,
};

/**
 * The tenant plan's objects as the provider host takes them: each reference
 * to another object's output is that output as the adopted object has it,
 * and the price is the catalogue's. Fails naming the object when it refers
 * to one without an id, whose outputs only a create would give.
 */
export function adoptionDeclarations(
  plan: readonly PlannedObject[],
  plans: readonly Plan[],
  label: string,
): Declaration[] {
  const byName = new Map(plan.map((object) => [object.name, object]));
  const resolve = (value: unknown): unknown => {
    if (value instanceof PriceOf) return priceIdFor(plans, value.plan, label);
    if (!(value instanceof OutputOf)) return value;
    const referenced = byName.get(value.object);
    const id = referenced?.inputs[IMPORT_KEY];
    if (typeof id !== "string") {
      throw new Error(`${label}: ${referenced?.what ?? value.object} has no id, so no adoption of it can be checked`);
    }
    return OUTPUTS_FROM_ID[value.output](id);
  };
  return plan.map((object) => ({
    typeName: object.type,
    what: object.what,
    part: object.part,
    inputs: Object.fromEntries(Object.entries(object.inputs).map(([input, value]) => [input, resolve(value)])),
  }));
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
