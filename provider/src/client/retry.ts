import type { IncomingHttpHeaders } from "node:http";

// When to try again and how long to wait first. Pure functions, so the
// policy can be read and tested apart from the network.

export interface RetrySettings {
  maxAttempts: number;
  maxRetryElapsedMs: number;
  retryBaseDelayMs: number;
  retryMaxDelayMs: number;
}

/** Answers that mean "not done, try later" for every call, state-changing ones included. */
const TRANSIENT_STATUSES = new Set([429, 502, 503, 504]);

/**
 * A 500 is transient too (the service's guide says so), but it may come from
 * a half-finished change, so only calls that can safely run twice repeat it.
 */
export function isRetryableStatus(status: number, repeatable: boolean): boolean {
  return TRANSIENT_STATUSES.has(status) || (repeatable && status === 500);
}

/** Exponential backoff with full jitter: uniform in [0, min(max, base * 2^(retry-1))). */
export function backoffDelayMs(retry: number, settings: RetrySettings, random: () => number = Math.random): number {
  const ceiling = Math.min(settings.retryMaxDelayMs, settings.retryBaseDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.floor(random() * ceiling);
}

/** The longer of the waits the service asked for, in `Retry-After` or in `details.retryAfterSeconds`. */
export function requestedDelayMs(
  headers: IncomingHttpHeaders,
  retryAfterSeconds: unknown,
  now: number = Date.now(),
): number | undefined {
  const candidates: number[] = [];
  if (typeof retryAfterSeconds === "number" && Number.isFinite(retryAfterSeconds) && retryAfterSeconds >= 0) {
    candidates.push(retryAfterSeconds * 1000);
  }
  const header = headers["retry-after"];
  const value = Array.isArray(header) ? header[0] : header;
  if (value !== undefined && value.trim() !== "") {
    if (/^\d+(\.\d+)?$/.test(value.trim())) candidates.push(Number(value.trim()) * 1000);
    else {
      const date = Date.parse(value);
      if (Number.isFinite(date)) candidates.push(Math.max(0, date - now));
    }
  }
  return candidates.length === 0 ? undefined : Math.max(...candidates);
}

/** The window the published limit is counted in ("60 requests per minute"). */
export const RATE_LIMIT_WINDOW_MS = 60_000;
/** The first wait after a 429 without a hint: one request's share of the window at the published rate. */
const RATE_LIMIT_FIRST_WAIT_MS = 1_000;

/**
 * The wait after a 429 that says nothing of when to come back (the published
 * example carries no hint): doubling from a second up to the whole window,
 * with "equal jitter" (the upper half of the range) so the waits add up to a
 * full window, wherever in it the limit was met, within 8 tries.
 */
export function rateLimitDelayMs(retry: number, random: () => number = Math.random): number {
  const ceiling = Math.min(RATE_LIMIT_WINDOW_MS, RATE_LIMIT_FIRST_WAIT_MS * 2 ** Math.max(0, retry - 1));
  return Math.floor(ceiling / 2 + (random() * ceiling) / 2);
}

/** Why a retry waits: the service asked for a time, refused without one (429), or failed. */
export type WaitReason = { kind: "requested"; ms: number } | { kind: "rateLimited" } | { kind: "fault" };

/**
 * The wait before retry number `retry` (1 for the first retry). A wait the
 * service asked for is honoured in full, plus a little jitter so that callers
 * throttled together do not all come back in the same instant.
 */
export function retryDelayMs(
  retry: number,
  settings: RetrySettings,
  reason: WaitReason,
  random: () => number = Math.random,
): number {
  if (reason.kind === "requested") return Math.ceil(reason.ms + random() * settings.retryBaseDelayMs);
  if (reason.kind === "rateLimited") return rateLimitDelayMs(retry, random);
  return backoffDelayMs(retry, settings, random);
}

/** Why an answer waits, from its status and the wait it asked for. */
export function waitReasonOf(status: number, requestedMs: number | undefined): WaitReason {
  if (requestedMs !== undefined) return { kind: "requested", ms: requestedMs };
  return status === 429 ? { kind: "rateLimited" } : { kind: "fault" };
}

/**
 * The wait before the next attempt when one fits in the bounds (attempts made
 * so far, time since the first one), else undefined. A wait of our own
 * choosing after a 429 is cut to what the time bound leaves, so the last try
 * comes as late as allowed; a wait the service asked for is not, as coming
 * back sooner only meets another 429.
 */
export function boundedDelayMs(
  attemptsMade: number,
  elapsedMs: number,
  delayMs: number,
  reason: WaitReason,
  settings: RetrySettings,
): number | undefined {
  if (attemptsMade >= settings.maxAttempts) return undefined;
  const left = settings.maxRetryElapsedMs - elapsedMs;
  if (delayMs <= left) return delayMs;
  return reason.kind === "rateLimited" && left >= RATE_LIMIT_FIRST_WAIT_MS ? Math.floor(left) : undefined;
}
