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

/**
 * The wait before retry number `retry` (1 for the first retry). A wait the
 * service asked for is honoured in full, plus a little jitter so that callers
 * throttled together do not all come back in the same instant.
 */
export function retryDelayMs(
  retry: number,
  settings: RetrySettings,
  requested: number | undefined,
  random: () => number = Math.random,
): number {
  if (requested !== undefined) return Math.ceil(requested + random() * settings.retryBaseDelayMs);
  return backoffDelayMs(retry, settings, random);
}

/** Whether another attempt fits in the bounds: attempts made so far, and time since the first one. */
export function withinBounds(
  attemptsMade: number,
  elapsedMs: number,
  delayMs: number,
  settings: RetrySettings,
): boolean {
  return attemptsMade < settings.maxAttempts && elapsedMs + delayMs <= settings.maxRetryElapsedMs;
}
