import { removeRecord } from "pulumi-dmarc-partner/dns";
import {
  exitCodeOf,
  FINDINGS_FORMAT_VERSION,
  FLEET_EXIT,
  type FleetFindings,
  type FleetOptions,
  type FleetReport,
  findingsMarkdown,
  findingsText,
  runFleet,
  type TenantFindings,
} from "pulumi-dmarc-partner/fleet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  dropFleetStacks,
  type Entry,
  findingsOutline,
  fleetOptions,
  inventoryOf,
  serviceClient,
  tenant,
  uniqueFleetName,
} from "../fleet/support";
import { dnsServersUnavailable, type RunningDnsServer, startDnsServer, ZONE } from "../support/dnsServers";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { useEngine } from "../support/engine";

// dmarc-fleet publishing every tenant's record to BIND by RFC 2136, its up
// ending once the service (the emulator resolving through BIND) has verified
// every domain: a record changed or removed on the server (with the
// administrator's key, as someone outside the fleet would) is named by
// `drift`, which writes nothing, and put back by the next `up`; the findings
// name records by what they are; a tenant removed from the inventory keeps
// its record until its offboarding is approved, and for good when it is kept
// (onDelete: keep). Two shards of two tenants, one domain each (the names
// the test server's publishing key may update).

const unavailable = await dnsServersUnavailable();
if (unavailable) console.warn(`Skipping the fleet's RFC 2136 publishing: ${unavailable}`);

const SECRET_ENV = "DMARC_TEST_FLEET_DNS_KEY_SECRET";
const DOMAINS: Record<string, string> = {
  alpha: ZONE,
  bravo: `shop.${ZONE}`,
  charlie: `mail.${ZONE}`,
  delta: `news.${ZONE}`,
};
const KEYS = Object.keys(DOMAINS);
const hostOf = (key: string) => `_dmarc.${DOMAINS[key]}`;
const recordOf = (key: string) => `Rfc2136Record ${DOMAINS[key]}/dns-record`;

let dns: RunningDnsServer;
let emulator: EmulatorHandle;
const fleet = uniqueFleetName("dnsfleet");
/** What each tenant's record holds after the first up, as the server serves it. */
const published = new Map<string, string[]>();
/** The record's text as the first up published it. */
const publishedText = (key: string) => published.get(key)?.[0]?.replace(/^TXT (.*) @300$/, "$1") ?? "";

/** Delta is kept on offboarding: its organisation, domain and record stay. */
function entries(keys: readonly string[]): Entry[] {
  return keys.map((key) =>
    tenant(key, {
      domains: [{ name: DOMAINS[key], verify: true }],
      ...(key === "delta" ? { onDelete: "keep" } : {}),
    }),
  );
}

function options(keys: readonly string[] = KEYS, extra: Partial<FleetOptions> = {}): FleetOptions {
  const defaults = {
    dns: { rfc2136: { server: dns.address, keyName: dns.key.name, keySecretEnv: SECRET_ENV, ttl: 300 } },
  };
  return fleetOptions(emulator, fleet, inventoryOf(entries(keys), { defaults }), extra);
}

function statuses(report: FleetReport): string[][] {
  return report.results.map((result) => [result.shard, result.status, result.reason ?? ""]);
}

function invocation(report: FleetReport) {
  return { command: report.command, json: false, detailedExitcode: false, failOnUnmanaged: false, options: options() };
}

describe.skipIf(unavailable !== undefined)("a fleet publishing its records by RFC 2136", () => {
  beforeAll(async () => {
    await useEngine();
    dns = await startDnsServer("bind");
    // The service verifies each domain by what BIND serves.
    emulator = await startTestEmulator({ dns: { resolver: dns.address, checkIntervalMs: 100 } });
    process.env[SECRET_ENV] = dns.key.secret;
  }, 600_000);

  afterAll(async () => {
    try {
      if (emulator) await dropFleetStacks(options([]), fleet);
    } finally {
      delete process.env[SECRET_ENV];
      await emulator?.emulator.close();
      await dns?.stop();
    }
  }, 600_000);

  it("publishes every tenant's record and ends with every domain verified in one up, and a second up touches no shard", async () => {
    const up = await runFleet("up", options());
    expect(up.ok).toBe(true);
    const client = serviceClient(emulator);
    const domains = await Promise.all((await client.listOrganizations()).map((org) => client.listDomains(org.id)));
    expect(
      domains
        .flat()
        .map((domain) => [domain.domain, domain.domainVerified])
        .sort(),
    ).toEqual(
      Object.values(DOMAINS)
        .map((domain) => [domain, true])
        .sort(),
    );
    for (const key of KEYS) {
      const served = await dns.served(hostOf(key));
      expect(served).toHaveLength(1);
      expect(served[0]).toMatch(/^TXT v=DMARC1;.* @300$/);
      published.set(key, served);
    }
    expect(findingsOutline(up.tenants, ["created"]).alpha).toContain(`created ${recordOf("alpha")}`);

    const again = await runFleet("up", options());
    expect(statuses(again)).toEqual([
      [`${fleet}-001`, "skipped", "unchanged since its last up"],
      [`${fleet}-002`, "skipped", "unchanged since its last up"],
    ]);
  }, 600_000);

  it("drift names a record removed and one changed on the server, writing nothing; up puts both back", async () => {
    await removeRecord(dns.target(dns.adminKey), {
      zone: ZONE,
      name: hostOf("alpha"),
      type: "TXT",
      value: publishedText("alpha"),
    });
    await dns.put(hostOf("bravo"), "TXT", "v=DMARC1; p=none");

    const drift = await runFleet("drift", options());
    expect(drift.ok).toBe(true);
    expect(exitCodeOf(drift, invocation(drift))).toBe(FLEET_EXIT.drift.code);
    expect(findingsOutline(drift.tenants, ["differs", "missing"])).toEqual({
      alpha: [`missing ${recordOf("alpha")}`],
      bravo: [`differs ${recordOf("bravo")} value: ${publishedText("bravo")} -> v=DMARC1; p=none`],
    });
    const found = views(drift);
    expect(found).toContain(`    !- record ${hostOf("alpha")}: removed from the server\n`);
    expect(found).toContain(
      `    ! record ${hostOf("bravo")}: changed on the server (value)\n        value: "${publishedText("bravo")}" → "v=DMARC1; p=none"\n`,
    );
    expect(found).toContain(`- ! record ${hostOf("bravo")}: changed on the server (value)\n`);
    expect(await dns.served(hostOf("alpha"))).toEqual([]);
    expect(await dns.served(hostOf("bravo"))).toEqual(["TXT v=DMARC1; p=none @300"]);

    const up = await runFleet("up", options());
    expect(up.ok).toBe(true);
    expect(statuses(up)).toEqual([
      [`${fleet}-002`, "skipped", "unchanged since its last up"],
      [`${fleet}-001`, "done", ""],
    ]);
    for (const key of ["alpha", "bravo"]) expect(await dns.served(hostOf(key))).toEqual(published.get(key));
    const done = views(up);
    expect(done).toContain(
      `    + record ${hostOf("alpha")} TXT: create\n        server: "${dns.address}"\n        ttl: 300\n        value: "${publishedText("alpha")}"\n`,
    );
    expect(done).toContain(`    ~ record ${hostOf("bravo")}: update value\n`);
    expect(done).not.toContain("keyName");
    const quiet = await runFleet("drift", options());
    expect(quiet.tenants).toEqual([]);
  }, 600_000);

  it("keeps a removed tenant's record until its offboarding is approved, then deletes it from the zone", async () => {
    const refused = await runFleet("up", options(["alpha", "bravo", "delta"]));
    expect(refused.ok).toBe(true);
    expect(exitCodeOf(refused, invocation(refused))).toBe(FLEET_EXIT.refused.code);
    const [charlie] = refused.tenants;
    expect(charlie?.key).toBe("charlie");
    expect(charlie?.offboarding?.status).toBe("refused");
    expect(charlie?.offboarding?.objects.map((object) => object.name)).toContain(`${DOMAINS.charlie}/dns-record`);
    expect(views(refused)).toContain(`    - record ${hostOf("charlie")}: removed from its zone\n`);
    expect(await dns.served(hostOf("charlie"))).toEqual(published.get("charlie"));

    const approved = await runFleet("up", options(["alpha", "bravo", "delta"], { allowOffboard: ["charlie"] }));
    expect(approved.ok).toBe(true);
    expect(approved.tenants.map((found) => [found.key, found.offboarding?.status])).toEqual([["charlie", "approved"]]);
    expect(await dns.served(hostOf("charlie"))).toEqual([]);
    expect(await dns.served(hostOf("delta"))).toEqual(published.get("delta"));

    const kept = await runFleet("up", options(["alpha", "bravo"], { allowOffboard: ["delta"] }));
    expect(kept.ok).toBe(true);
    expect(views(kept)).toContain(`    - record ${hostOf("delta")}: kept (onDelete: keep)\n`);
    expect(await dns.served(hostOf("delta"))).toEqual(published.get("delta"));
  }, 600_000);
});

/** The findings as both views print them, for the assertions on their wording. */
function views(report: FleetReport): string {
  const subject = { command: report.command, fleet: report.fleet, results: report.results, findings: report };
  return `${findingsText(report, "findings")}\n${findingsMarkdown(subject, { fullReport: "full.md" })}`;
}

describe("the findings' words for a record", () => {
  const record = (properties: TenantFindings["created"][number]["properties"], effect?: string) => ({
    type: "Rfc2136Record",
    name: "acme.example/dns-record",
    id: "_dmarc.acme.example",
    ...(properties ? { properties } : {}),
    ...(effect ? { effect } : {}),
  });

  it("names it by its name in the zone and its type, and says what happens to it in both views", () => {
    const findings: FleetFindings = {
      formatVersion: FINDINGS_FORMAT_VERSION,
      tenants: [
        {
          key: "acme",
          shard: "prod-001",
          created: [],
          updated: [],
          replaced: [],
          deleted: [record(undefined, "removed from its zone")],
          differs: [],
          missing: [],
        },
        {
          key: "bravo",
          shard: "prod-001",
          created: [],
          updated: [
            record([
              { name: "type", old: "CNAME", new: "TXT" },
              { name: "value", old: "acme.example.rua.example", new: "v=DMARC1; p=none" },
            ]),
          ],
          replaced: [],
          deleted: [],
          differs: [],
          missing: [],
        },
      ],
      totals: {
        tenants: { new: 0, changed: 2, offboarding: 0, refused: 0, drifted: 0 },
        objects: { create: 0, update: 1, replace: 0, delete: 1, differs: 0, missing: 0 },
      },
      removableTombstones: [],
      notes: [],
    };
    const text = findingsText(findings, "Plan per tenant");
    expect(text).toContain("    - record _dmarc.acme.example: removed from its zone\n");
    expect(text).toContain(
      '    ~ record _dmarc.acme.example TXT: update type, value\n        type: "CNAME" → "TXT"\n        value: "acme.example.rua.example" → "v=DMARC1; p=none"\n',
    );
    const comment = findingsMarkdown({ command: "preview", fleet: "prod", results: [], findings }, { fullReport: "x" });
    expect(comment).toContain("- - record _dmarc.acme.example: removed from its zone\n");
    expect(comment).toContain(
      '- ~ record _dmarc.acme.example TXT: update type, value\n  - type: `"CNAME"` → `"TXT"`\n',
    );
  });
});
