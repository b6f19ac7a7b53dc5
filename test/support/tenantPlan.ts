import type { Plan } from "pulumi-dmarc-partner/api";
import { OUTPUTS_FROM_ID } from "../../provider/src/discovery/adoption";
import { OutputOf, type PlannedObject, PriceOf } from "../../provider/src/tenant/plan";
import { priceIdFor } from "../../provider/src/tenant/tenant";

// A Tenant's resources as a stack's state records them, and its tenant plan,
// in the same terms: a test compares the two to show the Tenant registers
// its plan and nothing else.

/** A resource as an exported stack holds it. */
export interface StateResource {
  urn: string;
  type: string;
  id?: string;
  parent?: string;
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
  retainOnDelete?: boolean;
  dependencies?: string[];
}

/** The resource's name: the last part of its URN. */
const nameOf = (urn: string) => urn.slice(urn.lastIndexOf("::") + 2);
const typeOf = (resource: StateResource) => resource.type.slice(resource.type.lastIndexOf(":") + 1);

/** What the tenant's component holds in state, in the terms of a plan: type, name, inputs, retain, dependencies. */
export function registeredOf(key: string, resources: readonly StateResource[]) {
  const component = resources.find(
    (resource) => resource.type === "dmarc:index:Tenant" && nameOf(resource.urn) === key,
  );
  return resources
    .filter((resource) => resource.parent === component?.urn)
    .map((resource) => {
      const { __provider: _provider, ...inputs } = resource.inputs ?? {};
      return {
        type: typeOf(resource),
        name: nameOf(resource.urn),
        inputs,
        retainOnDelete: resource.retainOnDelete === true,
        dependsOn: (resource.dependencies ?? [])
          .filter((urn) => urn !== component?.urn)
          .map(nameOf)
          .sort(),
      };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** The plan in the same terms, each reference resolved to the value the state holds for it. */
export function plannedOf(plan: readonly PlannedObject[], resources: readonly StateResource[], plans: Plan[]) {
  const byName = new Map(resources.map((resource) => [nameOf(resource.urn), resource]));
  const resolve = (value: unknown) => {
    if (value instanceof OutputOf) return OUTPUTS_FROM_ID[value.output](byName.get(value.object)?.id ?? "");
    if (value instanceof PriceOf) return priceIdFor(plans, value.plan, "");
    return value;
  };
  return plan
    .map((object) => ({
      type: object.type,
      name: object.name,
      inputs: Object.fromEntries(Object.entries(object.inputs).map(([input, value]) => [input, resolve(value)])),
      retainOnDelete: object.retainOnDelete,
      // Inputs taken from another object's outputs depend on it, as the engine records.
      dependsOn: [
        ...new Set([
          ...object.dependsOn,
          ...Object.values(object.inputs).flatMap((value) => (value instanceof OutputOf ? [value.object] : [])),
        ]),
      ].sort(),
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** Every resource of the stacks' exported states. */
export function stateResources(deployments: readonly unknown[]): StateResource[] {
  return deployments.flatMap((deployment) => (deployment as { resources?: StateResource[] }).resources ?? []);
}
