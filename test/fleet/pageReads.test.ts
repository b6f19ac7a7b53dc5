import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type DmarcClient } from "pulumi-dmarc-partner/client";
import {
  fleetPage,
  keepReads,
  keptReads,
  pageDays,
  readServiceFacts,
  type ShardState,
} from "pulumi-dmarc-partner/fleet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { inventoryOf, tenant } from "./support";

// The page's reads of the service, against the emulator: one overview per
// organisation and one pass-rate read per day; a read the service fails
// leaves exactly the cells it fed unknown (never fine), the others as read;
// the next day, with what the first run kept, only the new day is read.

let emulator: EmulatorHandle;
let client: DmarcClient;
const organizations: Record<string, string> = {};
const KEYS = ["north", "south"];

beforeAll(async () => {
  emulator = await startTestEmulator();
  // One attempt a read: a failed read is what is tested, not the client's retries.
  const { clientId, clientSecret } = emulator.partner;
  client = createClient({ baseUrl: emulator.emulator.url, clientId, clientSecret, maxAttempts: 1 });
  for (const key of KEYS) {
    const { id: organizationId } = await client.createOrganization({ name: `Tenant ${key}` });
    const { id: groupId } = await client.createDomainGroup({ organizationId, name: "Main" });
    await client.createDomain({ organizationId, domain: `${key}.example`, type: "sending", groupId });
    organizations[key] = organizationId;
  }
  await emulator.control("POST", "/clock", { advanceDays: 2 });
});

afterAll(async () => {
  await emulator?.emulator.close();
});

/** A shard holding both tenants, as a scan would read it. */
function shardState(): ShardState {
  const holdings = Object.fromEntries(
    KEYS.map((key) => [
      key,
      { urns: [], objects: [], organizationId: organizations[key], onDelete: "delete" as const },
    ]),
  );
  return { name: "page-001", tenants: KEYS, holdings };
}

async function pageWith(faultRoute: string | undefined) {
  const { today } = await emulator.control<{ today: string }>("GET", "/clock");
  const days = pageDays(new Date(Date.parse(today) - 86_400_000));
  const fault = faultRoute
    ? await emulator.control<{ id: string }>("POST", "/faults", { route: faultRoute, errorRate: 1, errorStatus: 500 })
    : undefined;
  try {
    const domains = KEYS.map((key) => `${key}.example`);
    const facts = await readServiceFacts(client, Object.values(organizations), domains, days);
    const states = new Map([[1, shardState()]]);
    const inventory = inventoryOf(KEYS.map((key) => tenant(key)));
    return fleetPage({ fleet: "page", inventory, states, lastRuns: {}, facts, requests: 0, now: new Date() });
  } finally {
    if (fault) await emulator.control("DELETE", `/faults/${fault.id}`);
  }
}

const domainOf = (page: Awaited<ReturnType<typeof pageWith>>, key: string) =>
  page.tenants.find((found) => found.key === key)?.domains[0];

describe("the page's reads", () => {
  it("read the overview and two days of reports as the emulator has them", async () => {
    const page = await pageWith(undefined);
    expect(page.reads.failures).toEqual([]);
    const north = domainOf(page, "north");
    expect(north).toMatchObject({ verified: false, onService: true, stage: "missing", dmarc: "no-record" });
    expect(north?.passRates.messages.filter((messages) => messages !== null)).toHaveLength(2);
    expect(north?.passRates.unread).toEqual([]);
  });

  it("leave a failed overview's cells unknown, and the pass rates as read", async () => {
    const page = await pageWith("POST /v1/domains/overview");
    expect(page.reads.failures).toEqual(
      KEYS.map(() => expect.stringMatching(/^overview of organisation org_\S+: .* answered 500/)),
    );
    expect(domainOf(page, "north")).toMatchObject({ verified: "unknown", stage: "unknown", dmarc: "unknown" });
    expect(domainOf(page, "north")?.passRates.unread).toEqual([]);
    expect(page.totals).toMatchObject({ verified: 0, unknown: 2, stages: { unknown: 2 } });
  });

  it("leave failed pass-rate days unread, never empty and fine", async () => {
    const page = await pageWith("POST /v1/dmarc/rua/auth-pass-rates");
    expect(page.reads.failures).toHaveLength(30);
    const north = domainOf(page, "north");
    expect(north?.passRates.unread).toHaveLength(30);
    expect(north?.stage).toBe("missing");
    expect(page.totals.unknown).toBe(2);
  });

  it("read the next day only the new day's pass rates, with what the day before kept, and agree with a full read", async () => {
    const OVERVIEW = "POST /v1/domains/overview";
    const PASS_RATES = "POST /v1/dmarc/rua/auth-pass-rates";
    const byRoute = async () => (await emulator.control<{ byRoute: Record<string, number> }>("GET", "/stats")).byRoute;
    const domains = KEYS.map((key) => `${key}.example`);
    const read = async (known: Parameters<typeof readServiceFacts>[4]) => {
      const { today } = await emulator.control<{ today: string }>("GET", "/clock");
      const days = pageDays(new Date(Date.parse(today) - 86_400_000));
      const before = await byRoute();
      const facts = await readServiceFacts(client, Object.values(organizations), domains, days, known);
      const after = await byRoute();
      const sent = (route: string) => (after[route] ?? 0) - (before[route] ?? 0);
      return { facts, overviews: sent(OVERVIEW), passRates: sent(PASS_RATES) };
    };
    const stateDir = mkdtempSync(join(tmpdir(), "page-kept-"));
    try {
      const first = await read(keptReads(stateDir, "page").rates);
      expect([first.overviews, first.passRates]).toEqual([KEYS.length, 30]);
      keepReads(stateDir, "page", { rates: first.facts.rates, runs: [] });
      await emulator.control("POST", "/clock", { advanceDays: 1 });
      const next = await read(keptReads(stateDir, "page").rates);
      expect([next.overviews, next.passRates]).toEqual([KEYS.length, 1]);
      const full = await read({});
      expect(full.passRates).toBe(30);
      expect(next.facts.failures).toEqual([]);
      for (const domain of domains) {
        expect(next.facts.passRates.get(domain)).toEqual(full.facts.passRates.get(domain));
        expect(next.facts.passRates.get(domain)?.messages.filter((messages) => messages !== null)).toHaveLength(3);
      }
      expect(Object.keys(next.facts.rates)).toEqual(next.facts.days);
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});
