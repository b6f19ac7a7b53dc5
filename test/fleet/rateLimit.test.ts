import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLIENT_DEFAULTS, formatRate, PUBLISHED_REQUESTS_PER_MINUTE } from "pulumi-dmarc-partner/client";
import { runFleet } from "pulumi-dmarc-partner/fleet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { useEngine } from "../support/engine";
import { busiestWindow, loggedArrivals } from "../support/requestLog";
import { scaledService } from "../support/timeScale";
import {
  dropFleetStacks,
  fleetOptions,
  inventoryOf,
  organizationsByName,
  serviceClient,
  tenant,
  uniqueFleetName,
} from "./support";

// The done-criterion for rate limits: a 20-tenant fleet against a
// service that admits the published 60 requests a minute and, like its
// published 429 example, never says when to come back. The fleet paces at
// the rate a partner gets against the real service by default (the emulator,
// on loopback, is unpaced unless told), and must end with no failure and no
// minute holding more requests than the limit. The tenants have the bench's
// shape, and onboarding them costs the floor of the published calls and no
// more: organisation, group, one batch for both domains, one setup read per
// domain, subscription, invitation and its user read, and on every other
// tenant a webhook and its secret (9.0 a tenant), however the pacing spaces
// the engine's creates. Ten times faster than the published minute under
// `npm test` (../support/timeScale.ts), at it under `npm run
// test:reliability`.

const service = scaledService(10);
/** The clients' pace, in requests a minute: the default for the service, at the service's speed. */
const pace = service.perMinute(CLIENT_DEFAULTS.requestsPerMinute);
const TENANTS = 20;

let emulator: EmulatorHandle;
const requestLog = join(mkdtempSync(join(tmpdir(), "dmarc-fleet-rate-")), "requests.jsonl");
const fleet = uniqueFleetName("paced");
const tenants = Array.from({ length: TENANTS }, (_, index) => {
  const key = `paced${String(index).padStart(2, "0")}`;
  return tenant(key, {
    domains: [{ name: `${key}.example` }, { name: `mail.${key}.example` }],
    admins: [`it@${key}.example`],
    ...(index % 2 === 0
      ? { webhooks: [{ name: "events", url: `https://hooks.${key}.example/dmarc`, events: ["domain.verified"] }] }
      : {}),
  });
});
/** The floor of the published calls for a tenant of this shape. */
const FLOOR_PER_TENANT = 9.0;
/** Requests a run makes once, whatever its size: tokens, the catalogue, the partner's organisation list. */
const PER_RUN_ROUTES = ["POST /auth/token", "GET /v1/partners/plans", "GET /v1/organizations"];

function options(inventoryTenants = tenants) {
  const base = fleetOptions(emulator, fleet, inventoryOf(inventoryTenants), { shardSize: 10, concurrency: 2 });
  // The client's own bounds (no lowered maxAttempts), at the default rate for the service.
  const config = { ...emulator.stackConfig, ...service.stackConfig(CLIENT_DEFAULTS.requestsPerMinute) };
  return { ...base, config };
}

beforeAll(async () => {
  await useEngine();
  emulator = await startTestEmulator({
    requestLogFile: requestLog,
    rateLimit: service.rateLimit,
  });
});

afterAll(async () => {
  await dropFleetStacks(options([]), fleet);
  await emulator?.emulator.close();
}, 300_000);

describe("a fleet against the published rate limit, without retry hints", () => {
  it("deploys 20 tenants with no failure and never more requests in the service's window than the limit", async () => {
    const run = options();
    const report = await runFleet("up", run);
    expect(report.results.map((result) => [result.shard, result.status, result.error ?? ""])).toEqual([
      [`${fleet}-001`, "done", ""],
      [`${fleet}-002`, "done", ""],
    ]);
    expect(report.ok).toBe(true);
    const organizations = await organizationsByName(serviceClient(emulator));
    for (const entry of tenants) expect(organizations.has(String(entry.name))).toBe(true);

    const times = loggedArrivals(requestLog);
    const busiest = busiestWindow(times, service.windowMs);
    const stats = await emulator.control<{ requests: number; rateLimited: number; byRoute: Record<string, number> }>(
      "GET",
      "/stats",
    );
    const perRun = PER_RUN_ROUTES.reduce((total, route) => total + (stats.byRoute[route] ?? 0), 0);
    const perTenant = (stats.requests - perRun) / TENANTS;
    console.log(`onboarding: ${perTenant.toFixed(2)} requests a tenant besides ${perRun} per run`, stats.byRoute);
    const minutes = ((times.at(-1) ?? 0) - (times[0] ?? 0)) / 60_000;
    console.log(
      `paced fleet at ${service.factor}x the published minute: ${times.length} requests over ${minutes.toFixed(2)} min (${(times.length / minutes).toFixed(1)} a minute), ` +
        `busiest window ${busiest}, ${stats.rateLimited} answered 429`,
    );
    expect(busiest).toBeLessThanOrEqual(PUBLISHED_REQUESTS_PER_MINUTE);
    expect(stats.rateLimited).toBe(0);
    expect(stats.byRoute["POST /v1/domains/batch"]).toBe(TENANTS);
    expect(stats.byRoute["POST /v1/domains"] ?? 0).toBe(0);
    expect(perTenant).toBeLessThanOrEqual(FLOOR_PER_TENANT);
    // --json's figure is the pacer's count over the tenants: at least the tenants' own requests, at most all the service saw.
    expect(report.requestsPerTenant).toBeGreaterThanOrEqual(Math.floor(perTenant * 100) / 100);
    expect(report.requestsPerTenant).toBeLessThanOrEqual(Math.ceil((stats.requests / TENANTS) * 100) / 100);

    const progress = run.progressText();
    expect(progress).toContain(`requests: ${formatRate(pace)} a minute for all shards together`);
    expect(progress).toContain(`${fleet}-001: paced at ${formatRate(pace / 2)} requests a minute`);
    // A shard's provider says when its pacing holds requests back, and the progress passes it on.
    expect(progress).toMatch(
      new RegExp(`${fleet}-00[12]: pacing at [\\d.]+ requests a minute .* waiting (its|their) turn`),
    );
  }, 1_200_000);
});
