import {
  type Deployment,
  isProviderType,
  type PendingOperation,
  pendingOperations,
  resourceName,
  resourcesOf,
  type StateResource,
  withEntries,
} from "../checkpoint/deployment";
import type { DmarcClient } from "../client";
import { recorded } from "../plugin/provider";
import { IMPORT_KEY } from "../runtime/host";
import { type AnyResourceDefinition, lifecycleContext } from "../runtime/lifecycle";
import { PROVIDER_KEY } from "../runtime/providerModule";
import { dmarcTypeName, pluginTypeName } from "../runtime/typeToken";
import { containsSecret, plain } from "../runtime/values";

// What recovery does with each pending operation an interrupted run left in
// the state. Only a pending create can have made an object the state does not
// know; it is looked up by the natural key its resource type declares
// (`lookUp`), never by a second copy of that knowledge here.
//
// Both ways of running the package's resources leave the same pending
// creates: the dynamic resources of a TypeScript program, and the provider
// plugin's of a Pulumi YAML, Python, Go or C# program or of one on a
// generated SDK. Only the type token and what a completed create records
// differ, so each is settled the same way. The plugin itself cannot settle
// them on a plain rerun (`pulumi cancel`, then `up`): its create is not told
// that a twin was interrupted, and the service has no idempotency key, so a
// create that took any object of the same natural key could take one the
// partner made by hand (a second "Production" group, an organisation of the
// same name) and a later destroy would delete it. Here the state itself says
// that a create of exactly these inputs was under way.

type Props = Record<string, unknown>;

/** How a family of this package's type tokens is read from the state, and what a completed create records. */
interface ResourceFamily {
  /** `Organization` for one of the family's tokens; undefined for any other token. */
  typeName(token: string): string | undefined;
  /** The outputs a completed create of `resource` would have recorded, `found` being the object read back. */
  outputs(resource: StateResource, definition: AnyResourceDefinition, id: string, found: Props): Props;
}

const FAMILIES: readonly ResourceFamily[] = [
  // The dynamic resources of a TypeScript program record their provider module beside the outputs.
  {
    typeName: dmarcTypeName,
    outputs: (resource, _definition, _id, found) =>
      plain({ ...found, [PROVIDER_KEY]: resource.inputs?.[PROVIDER_KEY] }),
  },
  // The provider plugin's resources record what its create answers. A create with a secret never gets
  // here (secret inputs are left, secret outputs recreated), so no secret needs the state's encryption.
  {
    typeName: pluginTypeName,
    outputs: (_resource, definition, id, found) => recorded(definition, id, plain(found) as Props, new Set()),
  },
];

/** `Organization` for either family's token of that type; undefined for other packages' types. */
function typeNameOf(token: string): string | undefined {
  for (const family of FAMILIES) {
    const name = family.typeName(token);
    if (name !== undefined) return name;
  }
  return undefined;
}

export type SettlementAction =
  /** The object exists: recorded under its id, as a completed create would have recorded it. */
  | "adopt"
  /** The object exists, but a secret output came only with the lost answer: deleted, the next `up` creates it. */
  | "recreate"
  /** The create never reached the service: the operation is dropped, the next `up` creates it. */
  | "drop"
  /** A pending update, delete, read or import: `pulumi refresh` reads the object back. */
  | "refresh"
  /** Left as it is: recovery cannot tell what happened (the reason says why). */
  | "unsettled"
  /**
   * A later run recorded the resource already (a plain `up` after the kill):
   * the operation is dropped, and the object found is left on the service
   * for a person to check, as the duplicate it probably is.
   */
  | "duplicate";

export interface SettlementStep {
  urn: string;
  /** `Organization`, `Webhook`...; the full type token for other packages' resources. */
  typeName: string;
  operation: string;
  action: SettlementAction;
  /** The service's id of the object found. */
  id?: string;
  reason: string;
}

export interface LookupServices {
  /** Needed as soon as there is a pending create to look up. */
  client: DmarcClient | undefined;
  /** The package's definition of a resource type, or undefined for a type it does not have. */
  definitionOf(typeName: string): AnyResourceDefinition | undefined;
}

function declaredInputs(resource: StateResource): { declared: Props; importId: unknown } {
  const { [PROVIDER_KEY]: _provider, [IMPORT_KEY]: importId, ...declared } = resource.inputs ?? {};
  return { declared, importId };
}

function idsInState(state: Deployment): Set<string> {
  return new Set(resourcesOf(state).flatMap((resource) => (resource.id ? [resource.id] : [])));
}

/** The id under which a later run recorded the resource, when one did. */
function recordedId(state: Deployment, urn: string): string | undefined {
  return resourcesOf(state).find((resource) => resource.urn === urn && !resource.delete)?.id;
}

function clientOf(services: LookupServices): DmarcClient {
  if (!services.client) throw new Error("recovery needs the service's settings to settle pending creates");
  return services.client;
}

/**
 * The pending create's definition and parsed inputs, to look its object up
 * with; or what becomes of it without a lookup (another package's resource,
 * an adoption, secret or unparsable inputs).
 */
function lookableInputs(
  resource: StateResource,
  definition: AnyResourceDefinition | undefined,
): { definition: AnyResourceDefinition; inputs: unknown } | Pick<SettlementStep, "action" | "reason"> {
  if (!definition) {
    return { action: "unsettled", reason: "not a resource of this package: check it with its own provider" };
  }
  const { declared, importId } = declaredInputs(resource);
  if (importId !== undefined) {
    return { action: "drop", reason: `an adoption of ${String(importId)}, which the next pulumi up makes again` };
  }
  if (containsSecret(declared)) {
    return { action: "unsettled", reason: "its inputs are secret, and recovery never decrypts them" };
  }
  const parsed = definition.inputs.safeParse(declared);
  if (!parsed.success) {
    return { action: "unsettled", reason: `its recorded inputs do not parse: ${parsed.error.issues[0]?.message}` };
  }
  return { definition, inputs: parsed.data };
}

async function settleCreate(
  operation: PendingOperation,
  services: LookupServices,
  known: Set<string>,
  recorded: string | undefined,
): Promise<SettlementStep> {
  const { resource } = operation;
  const typeName = typeNameOf(resource.type);
  const step = { urn: resource.urn, typeName: typeName ?? resource.type, operation: operation.type };
  // A killed run may leave the engine's provider instance being created.
  if (isProviderType(resource.type)) {
    return {
      ...step,
      action: "drop",
      reason: "a provider instance makes nothing outside the state; the next pulumi up makes it",
    };
  }
  const definition = typeName === undefined ? undefined : services.definitionOf(typeName);
  const lookable = lookableInputs(resource, definition);
  if ("action" in lookable) return { ...step, ...lookable };
  const id = await lookable.definition.lookUp({ ...lifecycleContext(clientOf(services)), known }, lookable.inputs);
  if (id === undefined)
    return { ...step, action: "drop", reason: "the create never reached the service; the next pulumi up makes it" };
  if (known.has(id)) return { ...step, action: "drop", id, reason: "the state records this object already" };
  known.add(id);
  if (recorded !== undefined) {
    return {
      ...step,
      action: "duplicate",
      id,
      reason: `a later run recorded ${recorded} for it; ${id} is probably a duplicate the interrupted run made: check it and delete it`,
    };
  }
  const secretOutputs = lookable.definition.secretOutputs ?? [];
  if (secretOutputs.length > 0) {
    const secrets = secretOutputs.join(", ");
    return { ...step, action: "recreate", id, reason: `its ${secrets} came only with the lost answer` };
  }
  return { ...step, action: "adopt", id, reason: "the create was carried out" };
}

/** Decides, without changing anything, what becomes of each pending operation. Lookups only read. */
export async function planSettlement(state: Deployment, services: LookupServices): Promise<SettlementStep[]> {
  const known = idsInState(state);
  const steps: SettlementStep[] = [];
  // In the order they began: an object a later create depends on is settled first.
  for (const operation of pendingOperations(state)) {
    if (operation.type === "creating") {
      steps.push(await settleCreate(operation, services, known, recordedId(state, operation.resource.urn)));
    } else {
      const { resource } = operation;
      steps.push({
        urn: resource.urn,
        typeName: typeNameOf(resource.type) ?? resource.type,
        operation: operation.type,
        action: "refresh",
        reason: `pending ${operation.type.replace(/ing$/, "e")}, read back by pulumi refresh`,
      });
    }
  }
  return steps;
}

/** The state as a completed create of the object would have left it. */
async function adopted(resource: StateResource, id: string, services: LookupServices): Promise<StateResource> {
  const family = FAMILIES.find((candidate) => candidate.typeName(resource.type) !== undefined);
  const definition = services.definitionOf(family?.typeName(resource.type) ?? "");
  if (!family || !definition) throw new Error(`${resource.urn}: no definition to adopt it with`);
  const { declared } = declaredInputs(resource);
  const inputs = definition.inputs.parse(declared);
  const found = await definition.read(lifecycleContext(clientOf(services)), id, inputs);
  if (!found) throw new Error(`${resourceName(resource.urn)}: ${id} was found, then could not be read back`);
  const now = new Date().toISOString();
  return {
    ...resource,
    id,
    outputs: family.outputs(resource, definition, id, found),
    created: now,
    modified: now,
  };
}

/**
 * Carries out the plan: deletes what is recreated, reads back what is
 * adopted, and answers the state to import. Operations left unsettled stay
 * pending; those for refresh stay too, refresh clears them.
 */
export async function applySettlement(
  state: Deployment,
  steps: readonly SettlementStep[],
  services: LookupServices,
): Promise<Deployment> {
  const next = structuredClone(state);
  const resources = resourcesOf(next);
  const byUrn = new Map(steps.map((step) => [step.urn, step]));
  const remaining: PendingOperation[] = [];
  for (const operation of pendingOperations(next)) {
    const step = operation.type === "creating" ? byUrn.get(operation.resource.urn) : undefined;
    if (step === undefined || step.action === "unsettled" || step.action === "refresh") {
      remaining.push(operation);
      continue;
    }
    if (step.action === "recreate" && step.id !== undefined) {
      const definition = services.definitionOf(step.typeName);
      await definition?.delete(
        lifecycleContext(clientOf(services)),
        step.id,
        declaredInputs(operation.resource).declared,
      );
    }
    if (step.action !== "adopt" || step.id === undefined) continue;
    const record = await adopted(operation.resource, step.id, services);
    // Dependents of a pending create never started, so appending keeps the state's order valid.
    resources.push(record);
  }
  return withEntries(next, resources, remaining);
}
