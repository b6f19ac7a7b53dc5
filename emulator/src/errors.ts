import type { ErrorCode, InvalidField } from "pulumi-dmarc-partner/api";
import type { z } from "zod";

/** A refusal; the profile (profiles.ts) turns it into the error body its source describes. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export function invalid(invalidFields: InvalidField[], message = "The request is invalid.", status = 400): ApiError {
  return new ApiError(status, "ValidationError", message, { invalidFields });
}

/** A business rule refused a well-formed request: 422 with the field at fault and a machine-readable reason. */
export function unprocessable(field: string, message: string, reason: string, extra: Record<string, unknown> = {}) {
  return new ApiError(422, "ValidationError", message, { invalidFields: [{ field, message }], reason, ...extra });
}

export function notFound(resourceType: string, resourceId: string): ApiError {
  return new ApiError(404, "ResourceNotFound", `${resourceType} ${resourceId} was not found.`, {
    resourceId,
    resourceType,
  });
}

export function forbidden(message: string, details: Record<string, unknown> = {}): ApiError {
  return new ApiError(403, "PermissionDenied", message, details);
}

export function conflict(resourceType: string, resourceId: string, conflictReason: string, message: string): ApiError {
  return new ApiError(409, "ResourceConflict", message, { conflictReason, resourceId, resourceType });
}

export function unauthenticated(message: string): ApiError {
  return new ApiError(401, "AuthenticationError", message, {}, { "www-authenticate": 'Bearer realm="dmarc"' });
}

export function internal(message: string, status = 500): ApiError {
  return new ApiError(status, "InternalServerError", message);
}

/** Zod issues as published `invalidFields`; an issue about the whole input is named after where it came from. */
export function invalidFieldsOf(error: z.ZodError, whole: string): InvalidField[] {
  return error.issues.map((issue) => ({ field: issue.path.map(String).join(".") || whole, message: issue.message }));
}
