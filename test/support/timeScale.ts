import { PUBLISHED_REQUESTS_PER_MINUTE } from "pulumi-dmarc-partner/client";
import { FULL } from "../reliability/harness";

// Time as a parameter for the tests that run against the service's rate
// limit. They assert ratios (a share of the limit, requests refused, the
// busiest window against the limit), not wall time, so `npm test` runs them
// `factor` times faster: the emulator admits the published 60 requests per a
// `factor`-th of a minute, and the clients pace at `factor` times their
// requests a minute over a window as short (the client's
// rateLimitWindowSeconds), so every ratio is the one at the published pace.
// `npm run test:reliability` (DMARC_RELIABILITY=full) runs the same cases at
// the published 60 a minute.

/** The service's limit, `factor` times faster under `npm test`, at the published minute under the reliability run. */
export interface ScaledService {
  /** How many times faster than the published minute: 1 under `npm run test:reliability`. */
  factor: number;
  /** The window the service counts its limit over, in milliseconds. */
  windowMs: number;
  /** The emulator's rate limit: the published requests a window, and no hint of when to come back. */
  rateLimit: { requests: number; perSeconds: number; hints: "none" };
  /** The limit in requests a minute, for shares of it. */
  limitPerMinute: number;
  /** A pace in requests a published minute (a client's requestsPerMinute) at this speed. */
  perMinute(published: number): number;
  /** A stack's `dmarc:*` settings for a pace in requests a published minute at this speed, with the service's window. */
  stackConfig(published: number): Record<string, { value: string }>;
}

export function scaledService(factor: number): ScaledService {
  const speed = FULL ? 1 : factor;
  return {
    factor: speed,
    windowMs: 60_000 / speed,
    rateLimit: { requests: PUBLISHED_REQUESTS_PER_MINUTE, perSeconds: 60 / speed, hints: "none" },
    limitPerMinute: PUBLISHED_REQUESTS_PER_MINUTE * speed,
    perMinute: (published) => published * speed,
    stackConfig: (published) => ({
      "dmarc:requestsPerMinute": { value: String(published * speed) },
      "dmarc:rateLimitWindowSeconds": { value: String(60 / speed) },
    }),
  };
}
