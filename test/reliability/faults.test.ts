import type { Stack } from "@pulumi/pulumi/automation";
import { afterAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { createTestStack } from "../support/engine";
import { declaredInventory, fleetProgram, inventory, RESOURCES_PER_TENANT, serviceIds, stateIds } from "./fleet";
import { DOMAIN_CREATE_ROUTES, emulatorState, FULL, report, type Stats, stats } from "./harness";

// The fault matrix: a 20-tenant fleet through the real engine while the
// emulator throttles, fails, stalls and drops connections. Whatever happens,
// the service must never hold an object the stack does not know of; once the
// incident is over the fleet converges to exactly what was declared, and a
// destroy leaves nothing behind.

const TENANTS = 20;

type Fault = Record<string, unknown> & { route: string };

interface Scenario {
  name: string;
  faults: Fault[];
  /** Provider settings for the run (`dmarc:<key>`). */
  config: Record<string, string>;
  /**
   * Every fault is one the provider must absorb on its own: the first `up`
   * and the `destroy` succeed while the faults last. Otherwise the first `up`
   * may fail with clear errors, and a second one after the incident converges.
   */
  absorbable: boolean;
  /** In `npm test`; the others run with `npm run test:reliability`. */
  representative?: boolean;
}

/**
 * Rates for `count` faults checked in turn (the first that fires wins) so
 * that together they fail `total` of all requests, each an equal part.
 */
function evenShares(total: number, count: number): number[] {
  const share = total / count;
  return Array.from({ length: count }, (_, index) => share / (1 - share * index));
}

/** Slow answers, `times` per route, on creates (outcome unknown) and reads (retried). */
function stalls(latencyMs: number, times: number, routes: string[]): Fault[] {
  return routes.map((route) => ({ route, latencyMs, times }));
}

const STALLED_ROUTES = [
  "POST /v1/organizations",
  "POST /v1/domain-groups",
  "POST /v1/domains",
  "POST /v1/domains/batch",
  "GET /v1/domains/:domain/setup",
  "POST /v1/webhooks",
  "POST /v1/partners/subscriptions/assign",
  "POST /v1/users/invite",
  "GET /v1/users/:userId",
];

const scenarios: Scenario[] = [
  {
    name: "everything at once",
    faults: [
      { route: "*", rateLimit: { requests: 25, perSeconds: 1 } },
      { route: "*", errorRate: 0.1, errorStatus: 503 },
      { route: "*", dropRate: 0.05 },
      { route: "*", dropRate: 0.05, dropAfterProcessing: true },
      ...stalls(2_500, 2, ["POST /v1/organizations", ...DOMAIN_CREATE_ROUTES, "GET /v1/users/:userId"]),
    ],
    config: { maxAttempts: "12", requestTimeoutMs: "1500" },
    absorbable: true,
    representative: true,
  },
  {
    name: "429 storm",
    faults: [{ route: "*", rateLimit: { requests: 8, perSeconds: 1 } }],
    config: { maxAttempts: "30" },
    absorbable: true,
  },
  {
    name: "20% gateway errors (502, 503, 504)",
    faults: evenShares(0.2, 3).map((errorRate, index) => ({
      route: "*",
      errorRate,
      errorStatus: [502, 503, 504][index] as number,
    })),
    config: { maxAttempts: "10" },
    absorbable: true,
  },
  {
    // A 500 to a create is not retried (the service may have done part of
    // it): the first `up` reports those resources, the second finishes them.
    name: "20% server errors (500, 502, 503, 504)",
    faults: evenShares(0.2, 4).map((errorRate, index) => ({
      route: "*",
      errorRate,
      errorStatus: [500, 502, 503, 504][index] as number,
    })),
    config: { maxAttempts: "10" },
    absorbable: false,
  },
  {
    name: "latency beyond the client timeout",
    faults: stalls(2_500, 5, STALLED_ROUTES),
    config: { requestTimeoutMs: "1000" },
    absorbable: true,
  },
  {
    name: "20% of connections dropped before processing",
    faults: [{ route: "*", dropRate: 0.2 }],
    config: { maxAttempts: "10" },
    absorbable: true,
  },
  {
    name: "20% of connections dropped after processing",
    faults: [{ route: "*", dropRate: 0.2, dropAfterProcessing: true }],
    config: { maxAttempts: "10" },
    absorbable: true,
  },
];

interface FaultCounts {
  rateLimited: number;
  serverErrors: number;
  dropped: number;
  stalled: number;
}

function serverErrors(counted: Stats): number {
  return Object.entries(counted.byStatus)
    .filter(([status]) => Number(status) >= 500)
    .reduce((sum, [, count]) => sum + count, 0);
}

/** Stalls injected so far: what the latency faults with `times` have used up. */
async function stallsInjected(handle: EmulatorHandle, added: { id: string; times: number }[]): Promise<number> {
  const active = await handle.control<{ id: string; remaining: number | null }[]>("GET", "/faults");
  return added.reduce((sum, fault) => {
    const remaining = active.find((candidate) => candidate.id === fault.id)?.remaining ?? 0;
    return sum + fault.times - remaining;
  }, 0);
}

async function faultCounts(handle: EmulatorHandle, stalled: { id: string; times: number }[]): Promise<FaultCounts> {
  const counted = await stats(handle);
  return {
    rateLimited: counted.rateLimited,
    serverErrors: serverErrors(counted),
    dropped: counted.dropped,
    stalled: await stallsInjected(handle, stalled),
  };
}

const total = (counts: FaultCounts) => counts.rateLimited + counts.serverErrors + counts.dropped + counts.stalled;

/** Resources an `up` reported as failed, from its summary line. */
function erroredResources(message: string): number {
  return Number(/(\d+) errored/.exec(message)?.[1] ?? 0);
}

const handles: EmulatorHandle[] = [];
afterAll(async () => {
  await Promise.all(handles.map((handle) => handle.emulator.close()));
});

describe.each(scenarios.filter((scenario) => FULL || scenario.representative))(
  "a 20-tenant fleet under $name",
  (scenario) => {
    it("converges to exactly the declared objects and destroys cleanly, leaving nothing untracked", async () => {
      const handle = await startTestEmulator();
      handles.push(handle);
      const partnerId = handle.partner.id;
      const stack: Stack = await createTestStack({
        projectName: "reliability-faults",
        program: fleetProgram(TENANTS),
        config: {
          ...handle.stackConfig,
          ...Object.fromEntries(Object.entries(scenario.config).map(([key, value]) => [`dmarc:${key}`, { value }])),
        },
      });
      const priceId = `price_${partnerId}_starter_monthly`;

      // The service never holds an object the state does not record, nor twice the same.
      const expectNothingUntracked = async () => {
        const snapshot = await emulatorState(handle);
        expect(serviceIds(snapshot, partnerId)).toEqual(stateIds(await stack.exportStack()));
        const lines = inventory(snapshot, partnerId);
        expect(lines).toEqual([...new Set(lines)]);
      };

      const stalled: { id: string; times: number }[] = [];
      for (const fault of scenario.faults) {
        const { id } = await handle.control<{ id: string }>("POST", "/faults", fault);
        if (typeof fault.times === "number" && typeof fault.latencyMs === "number") {
          stalled.push({ id, times: fault.times });
        }
      }

      try {
        const first = await stack.up({ parallel: 16 }).then(
          () => undefined,
          (error: Error) => error.message,
        );
        const duringFirstUp = await faultCounts(handle, stalled);
        await expectNothingUntracked();
        if (scenario.absorbable) expect(first).toBeUndefined();
        let ups = 1;
        if (first !== undefined) {
          // What surfaced names the service's failure, never a crash.
          expect(first).toMatch(/answered 5\d\d/);
          expect(first).not.toMatch(/TypeError|ReferenceError|Cannot read properties/);
          await handle.control("DELETE", "/faults");
          const second = await stack.up({ parallel: 16 });
          expect(second.summary.result).toBe("succeeded");
          ups = 2;
          await expectNothingUntracked();
        }

        expect(inventory(await emulatorState(handle), partnerId)).toEqual(declaredInventory(TENANTS, priceId));
        const preview = await stack.preview();
        expect(preview.changeSummary).toEqual({ same: TENANTS * RESOURCES_PER_TENANT + 1 });

        const destroyed = await stack.destroy({ parallel: 16 });
        expect(destroyed.summary.result).toBe("succeeded");
        expect(inventory(await emulatorState(handle), partnerId)).toEqual([]);

        const injected = await faultCounts(handle, stalled);
        // The scenario really was an incident.
        expect(total(duringFirstUp)).toBeGreaterThan(0);
        const surfaced = first === undefined ? 0 : erroredResources(first);
        report("faults", scenario.name, {
          tenants: TENANTS,
          resources: TENANTS * RESOURCES_PER_TENANT,
          injectedDuringFirstUp: duringFirstUp,
          injectedInAll: injected,
          requests: (await stats(handle)).requests,
          firstUp: first === undefined ? "succeeded" : `failed (${surfaced} resources errored)`,
          ups,
          survived: total(injected) - surfaced,
          surfaced,
        });
      } finally {
        await stack.workspace.removeStack(stack.name, { force: true });
      }
    }, 600_000);
  },
);
