import type { InvalidField } from "../api";
import { redact, redactDeep } from "./redaction";

// Every message names what was being done (operation, method, path), what the
// service said, and what to do, because it is read in `pulumi up` output by
// someone who did not write the call. All text is redacted on construction.

/** What was being done when something failed. */
export interface CallContext {
  operation: string;
  method: string;
  path: string;
}

/** How long a call kept trying before it gave up. */
export interface Effort {
  attempts: number;
  elapsedMs: number;
}

function describeEffort(effort: Effort): string {
  if (effort.attempts <= 1) return "";
  return ` (after ${effort.attempts} attempts over ${(effort.elapsedMs / 1000).toFixed(1)} s)`;
}

/** The service answered with an error status. */
export class DmarcApiError extends Error {
  override readonly name = "DmarcApiError";
  readonly status: number;
  /** The service's `error` code, such as `ValidationError`; empty when the answer carried none. */
  readonly code: string;
  readonly serviceMessage: string;
  readonly invalidFields: InvalidField[];
  readonly details?: Record<string, unknown>;
  readonly traceId?: string;
  readonly method: string;
  readonly path: string;
  readonly operation: string;
  readonly attempts: number;
  /** The answer had no body, as the description shows for several 404s. */
  readonly emptyBody: boolean;

  constructor(init: {
    context: CallContext;
    effort: Effort;
    status: number;
    code: string;
    serviceMessage: string;
    details?: Record<string, unknown>;
    traceId?: string;
    emptyBody?: boolean;
  }) {
    const serviceMessage = redact(init.serviceMessage);
    const details = init.details === undefined ? undefined : (redactDeep(init.details) as Record<string, unknown>);
    const invalidFields = readInvalidFields(details);
    const { context, status, code, traceId } = init;
    const lines = [
      `${context.operation} failed: ${context.method} ${context.path} answered ${status}${code ? ` ${code}` : ""}` +
        `${serviceMessage ? `: ${serviceMessage}` : ""}${traceId ? ` (traceId ${traceId})` : ""}${describeEffort(init.effort)}`,
      ...invalidFields.map((item) => `  - ${item.field}: ${item.message}`),
      ...describeDetails(details),
      `What to do: ${adviceFor(status, code, context.path)}`,
    ];
    super(redact(lines.join("\n")));
    this.status = status;
    this.code = code;
    this.serviceMessage = serviceMessage;
    this.invalidFields = invalidFields;
    if (details !== undefined) this.details = details;
    if (traceId !== undefined) this.traceId = traceId;
    this.method = context.method;
    this.path = context.path;
    this.operation = context.operation;
    this.attempts = init.effort.attempts;
    this.emptyBody = init.emptyBody ?? false;
  }
}

function readInvalidFields(details: Record<string, unknown> | undefined): InvalidField[] {
  const list = details?.invalidFields;
  if (!Array.isArray(list)) return [];
  return list.flatMap((item: unknown) => {
    if (item === null || typeof item !== "object") return [];
    const { field, message } = item as Record<string, unknown>;
    return [{ field: String(field ?? "?"), message: String(message ?? "invalid") }];
  });
}

function describeDetails(details: Record<string, unknown> | undefined): string[] {
  if (details === undefined) return [];
  const lines: string[] = [];
  if (typeof details.conflictReason === "string") lines.push(`  conflict: ${details.conflictReason}`);
  if (Array.isArray(details.requiredPermissions)) {
    lines.push(`  required permissions: ${details.requiredPermissions.join(", ")}`);
  }
  if (typeof details.resourceType === "string" || typeof details.resourceId === "string") {
    lines.push(`  resource: ${details.resourceType ?? "?"} ${details.resourceId ?? ""}`.trimEnd());
  }
  if (typeof details.retryAfterSeconds === "number") {
    lines.push(`  the service asked to wait ${details.retryAfterSeconds} s`);
  }
  return lines;
}

/** The token call answers bad credentials with 400 in the description and 401 in the guides. */
const TOKEN_PATH = "/auth/token";

function adviceFor(status: number, code: string, path: string): string {
  if (path.startsWith(TOKEN_PATH) && (status === 400 || status === 401)) {
    return "the service refused the client credentials. Check clientId and clientSecret (dmarc:clientId, dmarc:clientSecret or DMARC_CLIENT_ID, DMARC_CLIENT_SECRET).";
  }
  if (status === 400 || status === 422) return "correct the values listed above and run again.";
  if (status === 401) {
    return "the service refused the credentials. Check clientId and clientSecret, or supply a fresh accessToken (a static token cannot be renewed by the client).";
  }
  if (status === 403)
    return "the partner account lacks the permission for this call; use the credentials of the partner that owns the object.";
  if (status === 404 && code === "ResourceNotFound") {
    return "the object does not exist (or belongs to another partner). If it was deleted outside this tool, refresh the state (for example `pulumi refresh`).";
  }
  if (status === 404) {
    return "the address answered 404 without the service's ResourceNotFound code, so the route itself may not exist there. Check that baseUrl is the service root (without /v1).";
  }
  if (status === 409) {
    return "the call conflicts with the service's current state (see the conflict above): adopt an object that already exists, or first end what stands in the way, then run again.";
  }
  if (status === 429) {
    // Retries stop at whichever bound comes first, and a wait asked for beyond them is not waited: name every knob that helps.
    return "the service kept rate limiting (its published limit is 60 requests a minute per partner, with daily limits besides). Lower requestsPerMinute so fewer requests meet the limit (several runs at once share it), or raise maxRetryElapsedMs and maxAttempts to wait longer; a wait the service asks for that is longer than maxRetryElapsedMs leaves is not waited, so run again after it.";
  }
  if (status >= 500) {
    return "the service is failing. Run again later, or raise maxAttempts and maxRetryElapsedMs to ride out longer outages.";
  }
  return "see the service's message above.";
}

/**
 * True for the service's "no such object" answer: a 404 with the
 * `ResourceNotFound` code, or a 404 with no body at all, as the description
 * shows for several routes. A 404 with some other body (a proxy's page, a
 * missing route) is not taken as "gone": every call first got its token from
 * the same address, so that address is the service.
 */
export function isNotFound(error: unknown): boolean {
  if (error instanceof OrganizationGoneError) return true;
  return (
    error instanceof DmarcApiError && error.status === 404 && (error.code === "ResourceNotFound" || error.emptyBody)
  );
}

/** The description's answer, on several routes, for an organisation that is not (or no longer) the partner's. */
export function refusesOrganization(error: unknown): boolean {
  return error instanceof DmarcApiError && (error.status === 403 || error.status === 422);
}

/**
 * A call scoped by an organisation was refused (403 or 422), and the
 * organisation's own read then answered 404: the organisation is gone, and so
 * is whatever the call was about. Counts as not found.
 */
export class OrganizationGoneError extends Error {
  override readonly name = "OrganizationGoneError";
  readonly organizationId: string;
  declare readonly cause: unknown;

  constructor(organizationId: string, cause: DmarcApiError) {
    super(
      redact(
        `${cause.operation}: organisation ${organizationId} is gone (its own read answers 404; ${cause.method} ${cause.path} answered ${cause.status}).`,
      ),
      { cause },
    );
    this.organizationId = organizationId;
  }
}

/**
 * A call that may change state (a create, an assignment, a renewal, an
 * invitation, a magic link) was sent, but no answer came back. It may or may
 * not have taken effect, so it is never sent again automatically: the caller
 * looks the object up and adopts it instead of creating a duplicate.
 */
export class OutcomeUnknownError extends Error {
  override readonly name = "OutcomeUnknownError";
  readonly method: string;
  readonly path: string;
  readonly operation: string;
  declare readonly cause: unknown;

  constructor(context: CallContext, reason: string, cause: unknown) {
    super(
      redact(
        `${context.operation}: ${context.method} ${context.path} was sent, but no answer came back (${reason}). ` +
          "The service may or may not have carried it out, so the client did not send it again (that could create a duplicate).\n" +
          "What to do: look the object up (read or list it) and adopt it if it exists; otherwise run again.",
      ),
      { cause },
    );
    this.method = context.method;
    this.path = context.path;
    this.operation = context.operation;
  }
}

/** The service could not be reached, or kept dropping the connection, within the retry bounds. */
export class DmarcTransportError extends Error {
  override readonly name = "DmarcTransportError";
  readonly method: string;
  readonly path: string;
  readonly operation: string;
  readonly attempts: number;
  readonly elapsedMs: number;
  declare readonly cause: unknown;

  constructor(
    context: CallContext & { origin: string },
    effort: Effort,
    reason: string,
    cause: unknown,
    /** Advice the fault itself carries (a proxy's refusal, an untrusted CA), said first. */
    advice?: string,
  ) {
    const gaveUp =
      effort.attempts > 1
        ? `gave up after ${effort.attempts} attempts over ${(effort.elapsedMs / 1000).toFixed(1)} s`
        : "not retried";
    const general =
      `check that ${context.origin} is the right baseUrl and is reachable from here. ` +
      "On a slow or flaky network raise requestTimeoutMs, maxAttempts or maxRetryElapsedMs.";
    super(
      redact(
        `${context.operation} failed: ${context.method} ${context.path} at ${context.origin}: ${reason}; ${gaveUp}.\n` +
          `What to do: ${advice === undefined ? general : `${advice} Otherwise ${general}`}`,
      ),
      { cause },
    );
    this.method = context.method;
    this.path = context.path;
    this.operation = context.operation;
    this.attempts = effort.attempts;
    this.elapsedMs = effort.elapsedMs;
  }
}

/** The client was configured in a way it refuses to run with. */
export class DmarcConfigError extends Error {
  override readonly name = "DmarcConfigError";

  constructor(message: string) {
    super(redact(message));
  }
}

/** The service answered, but not with something the client can use. */
export class DmarcResponseError extends Error {
  override readonly name = "DmarcResponseError";
  readonly method: string;
  readonly path: string;
  readonly operation: string;
  readonly status: number;

  constructor(context: CallContext, status: number, problem: string, advice: string) {
    super(
      redact(
        `${context.operation} failed: ${context.method} ${context.path} answered ${status} with ${problem}.\n` +
          `What to do: ${advice}`,
      ),
    );
    this.method = context.method;
    this.path = context.path;
    this.operation = context.operation;
    this.status = status;
  }
}
