import type { z } from "zod";
import { internal, invalid, invalidFieldsOf } from "./errors";

/** Validates a request body or query; refusals name every offending field. */
export function parseInput<T extends z.ZodType>(
  schema: T,
  value: unknown,
  whole: "body" | "query" | "params",
  status = 400,
): z.output<T> {
  const result = schema.safeParse(value ?? (whole === "body" ? undefined : {}));
  if (!result.success) throw invalid(invalidFieldsOf(result.error, whole), undefined, status);
  return result.data;
}

/**
 * Checks an answer against the provider's wire schema before it leaves, so the
 * emulator and the client cannot drift apart silently. The value is sent as
 * built (extra fields the schema ignores are kept).
 */
export function conform<T extends z.ZodType>(schema: T, value: z.input<T>): z.input<T> {
  const result = schema.safeParse(value);
  if (!result.success) {
    throw internal(`the emulator built an answer outside the wire schema: ${result.error.message}`);
  }
  return value;
}
