import { z } from "zod";

/** ISO 8601 timestamps, as the service sends them. */
export const Timestamp = z.string().min(1);

/** Error envelope of every failed call (facts page, section 3). */
export const InvalidField = z.object({ field: z.string(), message: z.string() });
export type InvalidField = z.infer<typeof InvalidField>;

export const ErrorCode = z.enum([
  "ValidationError",
  "AuthenticationError",
  "PermissionDenied",
  "ResourceNotFound",
  "ResourceConflict",
  "RateLimitExceeded",
  "InternalServerError",
]);
export type ErrorCode = z.infer<typeof ErrorCode>;

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
  })
  .catchall(z.unknown());

export const ErrorEnvelope = z.object({
  error: z.string(),
  message: z.string(),
  details: ErrorDetails.optional(),
  traceId: z.string().optional(),
});
export type ErrorEnvelope = z.infer<typeof ErrorEnvelope>;

/** Paginated list envelope (facts page, section 4). Pages start at 1, 100 items at most. */
export const ListMeta = z.object({
  total: z.number().int().nonnegative(),
  limit: z.number().int().positive(),
  page: z.number().int().positive(),
  pageCount: z.number().int().nonnegative(),
  hasPreviousPage: z.boolean(),
  hasNextPage: z.boolean(),
});
export type ListMeta = z.infer<typeof ListMeta>;

export function listOf<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), meta: ListMeta });
}

export const MAX_PAGE_SIZE = 100;

export const PageQuery = z.object({
  page: z.coerce.number().int().min(1).optional(),
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).optional(),
  pageSize: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).optional(),
});
