import { isDeepStrictEqual } from "node:util";
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
import {
  describeJudged,
  type JudgedCandidate,
  judgeCandidates,
  type OwnershipFacts,
  PROVEN_BECAUSE,
} from "./candidates";

// What recovery does with each pending operation an interrupted run left in
// the state. Only a pending create can have made an object the state does not
// know. Its type's natural-key lookup (`lookUp`) lists every object the create
// could have made, and candidates.ts weighs each by evidence, never by its
// name: the object is adopted only when exactly one is proven the create's
// (no stack of the backend records it, and the service made it after the
// killed run began, or the type's key leaves no other choice) and none is
// left in doubt. Anything else is dropped (nothing found could be its) or
// left unsettled with the candidates listed, for a person's `--adopt` or
// `--drop`, as Pulumi leaves a pending create to `--import-pending-creates`.
//
// Both ways of running the package's resources leave the same pending
// creates: the dynamic resources of a TypeScript program, and the provider
// plugin's of a Pulumi YAML, Python, Go or C# program or of one on a
// generated SDK. Only the type token and what a completed create records
// differ, so each is settled the same way. The plugin itself cannot settle
// them on a plain rerun (`pulumi cancel`, then `up`): its create is not told
// that a twin was interrupted, and the service has no idempotency key. Here
// the state itself says that a create of exactly these inputs was under way.

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
  /** Left as it is: recovery cannot tell what happened (the reason says why, the candidates what it found). */
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
  /** For an unsettled create: every object found that it may have made, each with what is known of it. */
  candidates?: JudgedCandidate[];
}

/** What a person decided for a pending create: adopt the object with this id (`--adopt`), or drop it (`--drop`). */
type PersonsDecision = { adopt: string } | "drop";

/**
 * What a person decided for pending creates, as typed: `--adopt <urn>=<id>`
 * and `--drop <urn>`. A URN and an id may each hold `=`: the URN is the
 * pending create's whose URN and `=` begin the argument.
 */
export interface PersonsDecisions {
  adopt?: readonly string[];
  drop?: readonly string[];
}

/** The decisions by URN, each matched to a pending create of the state; one that matches none is refused. */
function decisionsByUrn(state: Deployment, given: PersonsDecisions | undefined): Map<string, PersonsDecision> {
  const creates = pendingOperations(state)
    .filter((operation) => operation.type === "creating")
    .map((operation) => operation.resource.urn);
  const decisions = new Map<string, PersonsDecision>();
  for (const argument of given?.adopt ?? []) {
    const urn = creates.find((candidate) => argument.startsWith(`${candidate}=`));
    if (!urn)
      throw new Error(`--adopt ${argument}: no pending create of this stack has that URN (it takes <urn>=<id>)`);
    decisions.set(urn, { adopt: argument.slice(urn.length + 1) });
  }
  for (const urn of given?.drop ?? []) {
    if (!creates.includes(urn)) throw new Error(`--drop ${urn}: no pending create of this stack has that URN`);
    decisions.set(urn, "drop");
  }
  return decisions;
}

export interface LookupServices {
  /** Needed as soon as there is a pending create to look up. */
  client: DmarcClient | undefined;
  /** The package's definition of a resource type, or undefined for a type it does not have. */
  definitionOf(typeName: string): AnyResourceDefinition | undefined;
}

/** Everything a plan weighs besides the state: the service, the backend's other stacks, and what a person decided. */
export interface PlanInputs extends LookupServices {
  facts: OwnershipFacts;
  decisions?: PersonsDecisions;
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
): { definition: AnyResourceDefinition; inputs: Props } | Pick<SettlementStep, "action" | "reason"> {
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
  return { definition, inputs: parsed.data as Props };
}

/** Another stack's pending create of the same type and inputs: it may have made the object as well as this one. */
function twinElsewhere(resource: StateResource, inputs: Props, plan: PlanInputs): string | undefined {
  const typeName = typeNameOf(resource.type);
  const definition = typeName === undefined ? undefined : plan.definitionOf(typeName);
  const same = plan.facts.elsewhere.pendingCreates.find((pending) => {
    const parsed = definition?.inputs.safeParse(declaredInputs(pending.resource).declared);
    return typeNameOf(pending.resource.type) === typeName && parsed?.success && isDeepStrictEqual(parsed.data, inputs);
  });
  return same && `${same.urn} of stack ${same.stack}`;
}

/** What the objects found leave to do, when no person decided: one proven and none in doubt is adopted. */
function verdictOf(
  judged: readonly JudgedCandidate[],
  twin: string | undefined,
  facts: OwnershipFacts,
): { chosen: JudgedCandidate } | Pick<SettlementStep, "action" | "reason"> {
  const proven = judged.filter((candidate) => candidate.verdict === "proven");
  const open = judged.filter((candidate) => candidate.verdict === "unproven");
  if (proven.length === 0 && open.length === 0) {
    const reason =
      judged.length === 0
        ? "the create never reached the service; the next pulumi up makes it"
        : `the create never reached the service: the ${judged.length} object(s) of its key found are each recorded by a stack or older than the killed run; the next pulumi up makes it`;
    return { action: "drop", reason };
  }
  const doubt =
    facts.elsewhere.unreadable.length > 0
      ? `stacks of the backend could not be read, so what they record cannot be ruled out: ${facts.elsewhere.unreadable.join("; ")}`
      : twin
        ? `${twin} is a create of the same inputs left pending too, so either may have made it`
        : proven.length + open.length > 1
          ? `${proven.length + open.length} objects found could each be what the create made`
          : open.length > 0
            ? facts.runStartedAt === undefined
              ? "when the killed run began is not known (no lock of it was left), so nothing shows that it made the object found"
              : "nothing shows that the killed run made the object found (the service does not date it)"
            : undefined;
  if (doubt !== undefined || proven.length !== 1) {
    return { action: "unsettled", reason: doubt ?? "no single object is proven the create's" };
  }
  return { chosen: proven[0] as JudgedCandidate };
}

/** What becomes of the object taken for the create: adopted, recreated for a secret, or left as a later run's duplicate. */
function taken(
  step: Omit<SettlementStep, "action" | "reason">,
  definition: AnyResourceDefinition,
  id: string,
  recorded: string | undefined,
  why: string,
): SettlementStep {
  if (recorded !== undefined) {
    return {
      ...step,
      action: "duplicate",
      id,
      reason: `a later run recorded ${recorded} for it; ${id} is probably a duplicate the interrupted run made: check it and delete it`,
    };
  }
  const secretOutputs = definition.secretOutputs ?? [];
  if (secretOutputs.length > 0) {
    const secrets = secretOutputs.join(", ");
    return { ...step, action: "recreate", id, reason: `${why}; its ${secrets} came only with the lost answer` };
  }
  return { ...step, action: "adopt", id, reason: why };
}

/** A person's `--adopt`: the id must be one the create could have made, and no stack's. */
function decided(
  step: Omit<SettlementStep, "action" | "reason">,
  decision: { adopt: string },
  judged: readonly JudgedCandidate[],
): { chosen: JudgedCandidate } {
  const chosen = judged.find((candidate) => candidate.id === decision.adopt);
  const name = resourceName(step.urn);
  if (!chosen) {
    const found = judged.length > 0 ? judged.map(describeJudged).join("; ") : "none";
    throw new Error(
      `--adopt ${step.urn}=${decision.adopt}: ${decision.adopt} is not an object the create of ${name} could have made; found: ${found}`,
    );
  }
  if (chosen.verdict === "recordedElsewhere" || chosen.verdict === "recordedHere") {
    throw new Error(
      `--adopt ${step.urn}=${decision.adopt}: refused, ${describeJudged(chosen)}; two records of one object would let either stack's destroy delete it`,
    );
  }
  return { chosen };
}

async function settleCreate(
  operation: PendingOperation,
  plan: PlanInputs,
  here: Set<string>,
  recorded: string | undefined,
  decision: PersonsDecision | undefined,
): Promise<SettlementStep> {
  const { resource } = operation;
  const typeName = typeNameOf(resource.type);
  const step = { urn: resource.urn, typeName: typeName ?? resource.type, operation: operation.type };
  if (decision === "drop")
    return { ...step, action: "drop", reason: "dropped as asked (--drop); the next pulumi up makes it" };
  // A killed run may leave the engine's provider instance being created.
  if (isProviderType(resource.type)) {
    return {
      ...step,
      action: "drop",
      reason: "a provider instance makes nothing outside the state; the next pulumi up makes it",
    };
  }
  const definition = typeName === undefined ? undefined : plan.definitionOf(typeName);
  const lookable = lookableInputs(resource, definition);
  if ("action" in lookable) return { ...step, ...lookable };
  const found = await lookable.definition.lookUp(lifecycleContext(clientOf(plan)), lookable.inputs);
  const organizationId =
    typeof lookable.inputs.organizationId === "string" ? lookable.inputs.organizationId : undefined;
  const judged = judgeCandidates(found, lookable.definition.ownership, { facts: plan.facts, organizationId, here });
  const outcome = decision
    ? decided(step, decision, judged)
    : verdictOf(judged, twinElsewhere(resource, lookable.inputs, plan), plan.facts);
  if (!("chosen" in outcome)) {
    const listed = judged.filter((candidate) => candidate.verdict !== "recordedHere");
    return { ...step, ...outcome, ...(outcome.action === "unsettled" ? { candidates: listed } : {}) };
  }
  here.add(outcome.chosen.id);
  const why = decision ? "adopted as asked (--adopt)" : PROVEN_BECAUSE[lookable.definition.ownership];
  return taken(step, lookable.definition, outcome.chosen.id, recorded, why);
}

/** Decides, without changing anything, what becomes of each pending operation. Lookups only read. */
export async function planSettlement(state: Deployment, plan: PlanInputs): Promise<SettlementStep[]> {
  const here = idsInState(state);
  const steps: SettlementStep[] = [];
  const decisions = decisionsByUrn(state, plan.decisions);
  // In the order they began: an object a later create depends on is settled first.
  for (const operation of pendingOperations(state)) {
    if (operation.type === "creating") {
      const { urn } = operation.resource;
      steps.push(await settleCreate(operation, plan, here, recordedId(state, urn), decisions.get(urn)));
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
