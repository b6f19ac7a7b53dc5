// The parts of a stack's checkpoint (`pulumi stack export`, deployment
// version 3) that the fleet and recovery read and recovery edits. Everything
// else is carried through untouched, secrets included: they stay in the
// ciphertext form the export gave them. The one reader of checkpoints: no
// other module looks into a deployment's fields.

export interface StateResource {
  urn: string;
  type: string;
  id?: string;
  custom?: boolean;
  delete?: boolean;
  parent?: string;
  retainOnDelete?: boolean;
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
  [field: string]: unknown;
}

type PendingKind = "creating" | "updating" | "deleting" | "reading" | "importing";

export interface PendingOperation {
  type: PendingKind | string;
  resource: StateResource;
  [field: string]: unknown;
}

/** A stack's state as `pulumi stack export` gives it; the Automation API's `exportStack` answers the same shape. */
export interface Deployment {
  version: number;
  deployment: {
    manifest?: { time?: string; [field: string]: unknown };
    resources?: StateResource[];
    pending_operations?: PendingOperation[];
    [field: string]: unknown;
  };
}

/** The text of `pulumi stack export`, read. */
export function parseDeployment(text: string): Deployment {
  return JSON.parse(text) as Deployment;
}

export function resourcesOf(state: Deployment): StateResource[] {
  return state.deployment.resources ?? [];
}

export function pendingOperations(state: Deployment): PendingOperation[] {
  return state.deployment.pending_operations ?? [];
}

/** A copy of the state that holds these resources and pending operations instead of its own. */
export function withEntries(state: Deployment, resources: StateResource[], pending: PendingOperation[]): Deployment {
  return { ...state, deployment: { ...state.deployment, resources, pending_operations: pending } };
}

/** Whether a type is one of the engine's provider instances (`pulumi:providers:pulumi-nodejs`), not an object anywhere. */
export function isProviderType(type: string): boolean {
  return type.startsWith("pulumi:providers:");
}

/** The resource's name, the last part of its URN, for messages. */
export function resourceName(urn: string): string {
  return urn.slice(urn.lastIndexOf("::") + 2);
}

/** The stack and project a URN names (`urn:pulumi:<stack>::<project>::<type>::<name>`); undefined for anything else. */
export function urnStack(urn: string): { stack: string; project: string } | undefined {
  const match = /^urn:pulumi:([^:]+)::([^:]+)::/.exec(urn);
  return match ? { stack: match[1] as string, project: match[2] as string } : undefined;
}
