// The parts of an exported stack (`pulumi stack export`, deployment version 3)
// that recovery reads and edits. Everything else is carried through untouched,
// secrets included: they stay in the ciphertext form the export gave them.

/** Type token prefix of this package's resources (dynamic provider resources named `dmarc:<type>`). */
export const TYPE_PREFIX = "pulumi-nodejs:dynamic/dmarc:";

/** The engine's marker of a secret value in exported state; its presence means the value is ciphertext. */
export const SECRET_SIGNATURE = "4dabf18193072939515e22adb298388d";

export interface StateResource {
  urn: string;
  type: string;
  id?: string;
  custom?: boolean;
  delete?: boolean;
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
  [field: string]: unknown;
}

export type PendingKind = "creating" | "updating" | "deleting" | "reading" | "importing";

export interface PendingOperation {
  type: PendingKind | string;
  resource: StateResource;
  [field: string]: unknown;
}

export interface Deployment {
  version: number;
  deployment: {
    manifest?: { time?: string; [field: string]: unknown };
    resources?: StateResource[];
    pending_operations?: PendingOperation[];
    [field: string]: unknown;
  };
  [field: string]: unknown;
}

/** `Organization` for `pulumi-nodejs:dynamic/dmarc:Organization`; undefined for other packages' types. */
export function dmarcTypeName(type: string): string | undefined {
  return type.startsWith(TYPE_PREFIX) ? type.slice(TYPE_PREFIX.length) : undefined;
}

/** The resource's name, the last part of its URN, for messages. */
export function resourceName(urn: string): string {
  return urn.slice(urn.lastIndexOf("::") + 2);
}

/** Whether the value is, or holds, a secret still encrypted. */
export function holdsSecret(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(holdsSecret);
  if (value === null || typeof value !== "object") return false;
  return SECRET_SIGNATURE in value || Object.values(value).some(holdsSecret);
}

export function pendingOperations(state: Deployment): PendingOperation[] {
  return state.deployment.pending_operations ?? [];
}
