import { z } from "zod";
import { newId } from "./ids";

export const FaultSpec = z.object({
  /** "METHOD /v1/path/:param" of one API route, or "*" for every API route. */
  route: z.string().min(1).default("*"),
  latencyMs: z.number().int().min(0).max(600_000).optional(),
  /**
   * Time the service takes to carry the request out once it has received it:
   * a caller that gives up (or dies) meanwhile still finds it done, as with a
   * slow service. `latencyMs` comes before the request is received, so a
   * caller gone by then leaves nothing done.
   */
  processingMs: z.number().int().min(0).max(600_000).optional(),
  errorRate: z.number().min(0).max(1).optional(),
  errorStatus: z.union([z.literal(500), z.literal(502), z.literal(503), z.literal(504)]).optional(),
  rateLimit: z
    .object({
      requests: z.number().int().positive(),
      perSeconds: z.number().positive(),
      retryAfterSeconds: z.number().int().nonnegative().optional(),
      /** Where a 429 says when to come back; "none" is the published example, which says nothing. */
      hints: z.enum(["both", "header", "body", "none"]).default("both"),
      /**
       * "sliding": any `perSeconds` before each request; "fixed": each whole
       * period of the clock (every minute from :00 for 60), as a gateway
       * that resets a counter does, so a refusal may last a whole period.
       */
      window: z.enum(["sliding", "fixed"]).default("sliding"),
    })
    .optional(),
  dropRate: z.number().min(0).max(1).optional(),
  dropAfterProcessing: z.boolean().optional(),
  times: z.number().int().positive().optional(),
});
export type FaultSpec = z.infer<typeof FaultSpec>;

/** Status of an injected error when the fault names none. */
const DEFAULT_ERROR_STATUS = 503;

interface Fault {
  id: string;
  spec: FaultSpec;
  remaining: number | undefined;
  /** Arrival times (ms) of requests let through inside the current rate-limit window. */
  admitted: number[];
}

type RateLimit = NonNullable<FaultSpec["rateLimit"]>;

/** What a 429 carries: its message, its body's details and its headers. */
interface RateLimitAnswer {
  message: string;
  details: Record<string, unknown>;
  headers: Record<string, string>;
}

export type FaultOutcome =
  | { kind: "drop" }
  | { kind: "error"; status: number }
  | { kind: "rateLimit"; answer: RateLimitAnswer };

/** Which hints each `hints` setting puts in a 429: the `Retry-After` header, the body's `retryAfterSeconds`. */
const HINTS: Record<RateLimit["hints"], { header: boolean; body: boolean }> = {
  both: { header: true, body: true },
  header: { header: true, body: false },
  body: { header: false, body: true },
  none: { header: false, body: false },
};

function rateLimitAnswer(limit: RateLimit, retryAfterSeconds: number): RateLimitAnswer {
  const { requests, perSeconds } = limit;
  const hints = HINTS[limit.hints];
  return {
    message: `Rate limit of ${requests} requests per ${perSeconds} seconds exceeded.`,
    details: { limit: requests, period: `${perSeconds}s`, ...(hints.body ? { retryAfterSeconds } : {}) },
    headers: hints.header ? { "retry-after": String(retryAfterSeconds) } : {},
  };
}

/** Whether a request admitted at `time` still counts at `now`: within the last `windowMs`, or in the same period of the clock. */
function stillCounts(limit: RateLimit, windowMs: number, now: number, time: number): boolean {
  return limit.window === "fixed" ? Math.floor(time / windowMs) === Math.floor(now / windowMs) : now - time < windowMs;
}

export interface FaultDecision {
  latencyMs: number;
  processingMs: number;
  outcome: FaultOutcome | undefined;
  dropAfterProcessing: boolean;
}

/** Injected failures, matched per API route in the order they were added. */
export class Faults {
  private faults: Fault[] = [];

  add(spec: FaultSpec): string {
    const id = newId("flt");
    this.faults.push({ id, spec, remaining: spec.times, admitted: [] });
    return id;
  }

  remove(id: string): boolean {
    const before = this.faults.length;
    this.faults = this.faults.filter((fault) => fault.id !== id);
    return this.faults.length < before;
  }

  clear(): void {
    this.faults = [];
  }

  list(): Array<FaultSpec & { id: string; remaining: number | null }> {
    return this.faults.map((fault) => ({ id: fault.id, ...fault.spec, remaining: fault.remaining ?? null }));
  }

  /** Decides what happens to one request on `route` (its "METHOD /pattern"); consumes `times`. */
  decide(route: string): FaultDecision {
    const now = Date.now();
    const decision: FaultDecision = { latencyMs: 0, processingMs: 0, outcome: undefined, dropAfterProcessing: false };
    const matching = this.faults.filter((fault) => fault.spec.route === "*" || fault.spec.route === route);
    for (const fault of matching) {
      if (fault.remaining !== undefined) {
        fault.remaining -= 1;
        if (fault.remaining === 0) this.remove(fault.id);
      }
      const { spec } = fault;
      decision.latencyMs += spec.latencyMs ?? 0;
      decision.processingMs += spec.processingMs ?? 0;
      if (spec.dropAfterProcessing) {
        decision.dropAfterProcessing ||= Math.random() < (spec.dropRate ?? 1);
      }
      decision.outcome ??= this.outcomeOf(fault, now);
    }
    return decision;
  }

  private outcomeOf(fault: Fault, now: number): FaultOutcome | undefined {
    const { spec } = fault;
    if (!spec.dropAfterProcessing && spec.dropRate !== undefined && Math.random() < spec.dropRate) {
      return { kind: "drop" };
    }
    if (spec.rateLimit) {
      const limit = spec.rateLimit;
      const windowMs = limit.perSeconds * 1000;
      fault.admitted = fault.admitted.filter((time) => stillCounts(limit, windowMs, now, time));
      if (fault.admitted.length >= limit.requests) {
        // A slot frees when the oldest request leaves a sliding window, or when a fixed one ends.
        const freeAt =
          limit.window === "fixed"
            ? (Math.floor(now / windowMs) + 1) * windowMs
            : (fault.admitted[0] ?? now) + windowMs;
        const untilFree = Math.max(1, Math.ceil((freeAt - now) / 1000));
        return { kind: "rateLimit", answer: rateLimitAnswer(limit, limit.retryAfterSeconds ?? untilFree) };
      }
      fault.admitted.push(now);
    }
    // A fault naming a status but no rate fails every matching request.
    const errorRate = spec.errorRate ?? (spec.errorStatus === undefined ? 0 : 1);
    if (errorRate > 0 && Math.random() < errorRate) {
      return { kind: "error", status: spec.errorStatus ?? DEFAULT_ERROR_STATUS };
    }
    return undefined;
  }
}
