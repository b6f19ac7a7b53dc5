import { z } from "zod";
import { newId } from "./ids";

export const FaultSpec = z.object({
  /** "METHOD /v1/path/:param" of one API route, or "*" for every API route. */
  route: z.string().min(1).default("*"),
  latencyMs: z.number().int().min(0).max(600_000).optional(),
  errorRate: z.number().min(0).max(1).optional(),
  errorStatus: z.union([z.literal(500), z.literal(502), z.literal(503), z.literal(504)]).optional(),
  rateLimit: z
    .object({
      requests: z.number().int().positive(),
      perSeconds: z.number().positive(),
      retryAfterSeconds: z.number().int().nonnegative().optional(),
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

export type FaultOutcome =
  | { kind: "drop" }
  | { kind: "error"; status: number }
  | { kind: "rateLimit"; limit: number; perSeconds: number; retryAfterSeconds: number };

export interface FaultDecision {
  latencyMs: number;
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
    const decision: FaultDecision = { latencyMs: 0, outcome: undefined, dropAfterProcessing: false };
    const matching = this.faults.filter((fault) => fault.spec.route === "*" || fault.spec.route === route);
    for (const fault of matching) {
      if (fault.remaining !== undefined) {
        fault.remaining -= 1;
        if (fault.remaining === 0) this.remove(fault.id);
      }
      const { spec } = fault;
      decision.latencyMs += spec.latencyMs ?? 0;
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
      const { requests, perSeconds, retryAfterSeconds } = spec.rateLimit;
      const windowMs = perSeconds * 1000;
      fault.admitted = fault.admitted.filter((time) => now - time < windowMs);
      if (fault.admitted.length >= requests) {
        const oldest = fault.admitted[0] ?? now;
        const untilFree = Math.max(1, Math.ceil((oldest + windowMs - now) / 1000));
        return { kind: "rateLimit", limit: requests, perSeconds, retryAfterSeconds: retryAfterSeconds ?? untilFree };
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
