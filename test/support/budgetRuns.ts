import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type EmulatorHandle, startTestEmulator } from "./emulator";
import { type ProviderProcess, providerProcess } from "./providerProcess";
import { loggedArrivals } from "./requestLog";

// Runs of one partner against a service that admits a number of requests a
// window and says nothing of when to come back: each run a process of its
// own, with its own temporary folder and home as separate runs (or CI
// machines) have, and the service's own count of what it admitted and refused.

export interface LimitedService {
  handle: EmulatorHandle;
  /** The emulator's request log, one line a request. */
  log: string;
  /** The window the service counts its limit over, which the runs are told. */
  windowSeconds: number;
}

/** The emulator admitting `requests` every `perSeconds`, with no retry hint, logging every request. */
export async function limitedService(requests: number, perSeconds: number): Promise<LimitedService> {
  const log = join(mkdtempSync(join(tmpdir(), "dmarc-budget-")), "requests.jsonl");
  const handle = await startTestEmulator({ requestLogFile: log, rateLimit: { requests, perSeconds, hints: "none" } });
  return { handle, log, windowSeconds: perSeconds };
}

/**
 * A run of its own: its own temporary folder and home, the partner's credentials and the service's window,
 * `calls` reads at `perMinute`.
 */
export function budgetRun(
  service: LimitedService,
  calls: number,
  perMinute: number,
  env: Record<string, string> = {},
): ProviderProcess {
  const own = mkdtempSync(join(tmpdir(), "dmarc-budget-run-"));
  return providerProcess(calls, {
    ...service.handle.env,
    TMPDIR: own,
    HOME: own,
    DMARC_REQUESTS_PER_MINUTE: String(perMinute),
    DMARC_RATE_LIMIT_WINDOW_SECONDS: String(service.windowSeconds),
    ...env,
  });
}

/** What the service counted: every request, and those it answered 429. */
export function serviceCounts(service: LimitedService): Promise<{ requests: number; rateLimited: number }> {
  return service.handle.control("GET", "/stats");
}

/** The requests admitted, after the first, over the span from the first to the last, as a share of `limitPerMinute`. */
export function admittedShareOfLimit(log: string, limitPerMinute: number, from = 0): number {
  const times = loggedArrivals(log, from, { admitted: true });
  const minutes = ((times.at(-1) ?? 0) - (times[0] ?? 0)) / 60_000;
  return (times.length - 1) / (minutes * limitPerMinute);
}
