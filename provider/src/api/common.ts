import { z } from "zod";

/** ISO 8601 timestamps, as the service sends them. */
export const Timestamp = z.string().min(1);

/** One field a refusal names (facts page, section 3). */
export const InvalidField = z.object({ field: z.string(), message: z.string() });
export type InvalidField = z.infer<typeof InvalidField>;

export const ErrorCode = z.enum([
  "ValidationError",
  "UnprocessableEntity",
  "AuthenticationError",
  "PermissionDenied",
  "ResourceNotFound",
  "ResourceConflict",
  "RateLimitExceeded",
  "InternalServerError",
]);
export type ErrorCode = z.infer<typeof ErrorCode>;

/**
 * What `details` may carry: the guides' keys (`invalidFields`, `conflictReason`,
 * `retryAfterSeconds`…) and the OpenAPI description's (`message`, `property`,
 * `error`). Unknown keys are kept.
 */
export const ErrorDetails = z
  .object({
    invalidFields: z.array(InvalidField).optional(),
    requiredPermissions: z.array(z.string()).optional(),
    resourceId: z.string().optional(),
    resourceType: z.string().optional(),
    conflictReason: z.string().optional(),
    limit: z.number().optional(),
    period: z.string().optional(),
    retryAfterSeconds: z.number().optional(),
    message: z.string().optional(),
    property: z.string().optional(),
  })
  .catchall(z.unknown());

/**
 * The error body of a failed call, in either published shape: the guides'
 * `{ error, message, details, traceId }` or the description's `ErrorResponse`
 * `{ statusCode: "404", error, traceId, timestamp, details: { message, property } }`.
 * Every field is optional, so an error is never lost to its body's shape.
 */
export const ErrorEnvelope = z.object({
  error: z.string().optional(),
  message: z.string().optional(),
  statusCode: z.union([z.string(), z.number()]).optional(),
  details: ErrorDetails.optional(),
  traceId: z.string().optional(),
  timestamp: z.string().optional(),
});
export type ErrorEnvelope = z.infer<typeof ErrorEnvelope>;

/**
 * Paginated list meta. The guides list six fields; the description requires
 * none of them on most lists, and one example sends `{ pageSize, page, total }`:
 * every field is optional, and the client pages on with whatever comes.
 */
export const ListMeta = z.object({
  total: z.number().int().nonnegative().optional(),
  limit: z.number().int().positive().optional(),
  pageSize: z.number().int().positive().optional(),
  page: z.number().int().positive().optional(),
  pageCount: z.number().int().nonnegative().optional(),
  hasPreviousPage: z.boolean().optional(),
  hasNextPage: z.boolean().optional(),
});
export type ListMeta = z.infer<typeof ListMeta>;

export function listOf<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), meta: ListMeta.optional() });
}

export const MAX_PAGE_SIZE = 100;

export const PageQuery = z.object({
  page: z.coerce.number().int().min(1).optional(),
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).optional(),
  pageSize: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).optional(),
});
