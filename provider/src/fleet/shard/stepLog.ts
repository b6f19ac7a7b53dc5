import * as pulumi from "@pulumi/pulumi";
import type { EngineEvent, OpType, StepEventMetadata } from "@pulumi/pulumi/automation";
import { resourceName } from "../../checkpoint/deployment";
import { definitionOf } from "../../registry";
import { PROVIDER_KEY } from "../../runtime/providerModule";
import { containsSecret } from "../../runtime/values";
import { shortType, tenantKeyOf } from "./tenantHoldings";

// The engine's steps of every shard of a run, as its events give them:
// what each step does to which tenant's object, and which properties change
// from what to what. Secret values never enter it.

/** What a step does: the plan's four kinds, and what a refresh found. */
export type StepKind = "create" | "update" | "replace" | "delete" | "differs" | "missing";

/** One property of a step: its recorded value and the new one; `"[secret]"` for a secret, `"[unknown]"` for one known only after `up`. */
export interface PropertyChange {
  name: string;
  old?: unknown;
  new?: unknown;
}

export interface ResourceStep {
  shard: string;
  /** The tenant's key; undefined for the stack, providers and anything outside a tenant. */
  tenant: string | undefined;
  kind: StepKind;
  /** `Organization`, `Domain`...; another package's full type token. */
  type: string;
  name: string;
  id?: string;
  /** Changed properties (update, replace, differs), or the declared ones (create). */
  properties: PropertyChange[];
  /** A delete that leaves the object on the service (`onDelete: keep`). */
  retained?: true;
}

/** The plan's finished steps worth reporting; the others (same, read, the halves of a replacement) are not. */
const PLAN_KINDS: Partial<Record<OpType, StepKind>> = {
  create: "create",
  import: "create",
  update: "update",
  replace: "replace",
  delete: "delete",
};

/**
 * A refreshed object in preview mode: the engine reports it updated when it
 * differs, deleted when the service no longer has it. A refresh that writes
 * the state reports `refresh` either way: {@link refreshedKind} tells them apart.
 */
const REFRESH_PREVIEW_KINDS: Partial<Record<OpType, StepKind>> = { update: "differs", delete: "missing" };

/** Property names whose values are never shown, whether or not the engine marks them secret. */
const NEVER_SHOWN = new Set(["secret", "clientSecret", "magicLink", "password", "token"]);

function shown(name: string, value: unknown): unknown {
  if (NEVER_SHOWN.has(name) || containsSecret(value)) return "[secret]";
  // The engine's stand-in for a value not known until the operation runs.
  if (typeof value === "string" && value.includes(pulumi.runtime.unknownValue)) return "[unknown]";
  return value;
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The properties a step of this type is compared by: all but the provider's
 * module and the type's hints (inputs only the provider reads, such as how
 * many domains a tenant declares together), which a read never gives back.
 */
function comparedBy(type: string): (name: string) => boolean {
  const hints = new Set<string>(definitionOf(shortType(type))?.hints ?? []);
  return (name) => name !== PROVIDER_KEY && !hints.has(name);
}

/** The compared properties whose values differ between two property maps. */
function changedProperties(
  old: Record<string, unknown>,
  next: Record<string, unknown>,
  compared: (name: string) => boolean,
): PropertyChange[] {
  const names = [...new Set([...Object.keys(old), ...Object.keys(next)])].filter(compared);
  return names
    .filter((name) => !sameValue(old[name], next[name]))
    .sort()
    .map((name) => ({
      name,
      ...(old[name] === undefined ? {} : { old: shown(name, old[name]) }),
      ...(next[name] === undefined ? {} : { new: shown(name, next[name]) }),
    }));
}

function declaredProperties(inputs: Record<string, unknown>): PropertyChange[] {
  return Object.keys(inputs)
    .filter((name) => name !== PROVIDER_KEY && inputs[name] !== undefined)
    .sort()
    .map((name) => ({ name, new: shown(name, inputs[name]) }));
}

/** What a refresh found of the object: missing (it read nothing back), differs (declared properties changed), or nothing. */
function refreshedKind(step: StepEventMetadata): StepKind | undefined {
  if (step.op !== "refresh") return REFRESH_PREVIEW_KINDS[step.op];
  if (!step.new) return "missing";
  return changedProperties(step.old?.inputs ?? {}, step.new.inputs ?? {}, comparedBy(step.type)).length > 0
    ? "differs"
    : undefined;
}

function propertiesOf(kind: StepKind, step: StepEventMetadata): PropertyChange[] {
  const oldInputs = step.old?.inputs ?? {};
  const newInputs = step.new?.inputs ?? {};
  if (kind === "create") return declaredProperties(newInputs);
  const compared = comparedBy(step.type);
  if (kind === "update" || kind === "replace") return changedProperties(oldInputs, newInputs, compared);
  if (kind !== "differs") return [];
  // A read answers outputs and the inputs they imply; outputs only the service sets show when inputs agree.
  const inputs = changedProperties(oldInputs, newInputs, compared);
  return inputs.length > 0 ? inputs : changedProperties(step.old?.outputs ?? {}, step.new?.outputs ?? {}, compared);
}

/**
 * Collects the steps of every shard of one run. Each shard's operation
 * feeds it the engine's events through {@link StepLog.recorder}; a step
 * counts once it finished (its outputs event), so `up` reports what was
 * done and `preview` what would be.
 */
export class StepLog {
  private readonly recorded: ResourceStep[] = [];

  /** Every step recorded so far, in the order the engine finished them. */
  get steps(): readonly ResourceStep[] {
    return this.recorded;
  }

  /** Whether a refresh of the shard found an object that differs or is missing. */
  driftFound(shard: string): boolean {
    return this.recorded.some((step) => step.shard === shard && (step.kind === "differs" || step.kind === "missing"));
  }

  /** The event handler of one shard's operation. */
  recorder(shard: string): (event: EngineEvent) => void {
    const parents = new Map<string, string>();
    // Objects the operation is refreshing: their next finished step is what the refresh found, not the plan.
    const refreshing = new Set<string>();
    return (event) => {
      const started = event.resourcePreEvent?.metadata;
      if (started?.op === "refresh") refreshing.add(started.urn);
      const step = event.resOutputsEvent?.metadata;
      if (!step) return;
      const parent = step.new?.parent || step.old?.parent;
      if (parent) parents.set(step.urn, parent);
      const refreshed = refreshing.delete(step.urn);
      const kind = refreshed ? refreshedKind(step) : PLAN_KINDS[step.op];
      if (kind === undefined) return;
      const state = step.new ?? step.old;
      this.recorded.push({
        shard,
        tenant: tenantKeyOf(step.urn, (urn) => parents.get(urn)),
        kind,
        type: shortType(step.type),
        name: resourceName(step.urn),
        ...(state?.id ? { id: state.id } : {}),
        properties: propertiesOf(kind, step),
        ...(kind === "delete" && step.old?.retainOnDelete ? { retained: true as const } : {}),
      });
    };
  }
}
