import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadInventory } from "pulumi-dmarc-partner";
import {
  type EnforceReport,
  enforceExitCode,
  enforceMarkdown,
  enforceText,
  FLEET_EXIT,
  type FleetReport,
  findingsText,
  runEnforce,
  runFleet,
} from "pulumi-dmarc-partner/fleet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { settingsOf } from "../../provider/src/fleet/fleetOptions";
import { dropFleetStacks, fleetOptions, organizationsByName, serviceClient, uniqueFleetName } from "../fleet/support";
import { dnsServersUnavailable, type RunningDnsServer, startDnsServer } from "../support/dnsServers";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { useEngine } from "../support/engine";
import { DEGRADED, SENDER_PROFILES } from "../support/ramp";

// A fleet's DMARC policy ramp end to end: 10 tenants, 20 domains published
// to BIND, each with a sender profile of its own (clean, forwarding-heavy,
// low volume, misconfigured, one that degrades after its first move), target
// reject, a week a step. Rounds of `enforce --write` and `up`, the emulator's
// report clock moved a week between them, advance exactly the domains whose
// evidence holds, one step a round, as BIND serves and the service observes;
// the others hold with their numbers; the degrading one is proposed back; a
// p= changed by hand is drift that `up` puts back; a rerun with no new
// evidence proposes nothing and leaves the file byte for byte.

const unavailable = await dnsServersUnavailable();
if (unavailable) console.warn(`Skipping the policy ramp's end-to-end test: ${unavailable}`);

const ZONE = "ramp.example";
const SECRET_ENV = "DMARC_TEST_RAMP_DNS_KEY_SECRET";
const PASS_RATES_ROUTE = "POST /v1/dmarc/rua/auth-pass-rates";

type Profile = "clean" | "forwarding" | "low" | "misconfigured" | "degrading";
const PROFILES: Record<Profile, Record<string, unknown>> = SENDER_PROFILES;

/** Two domains a tenant; shards of two tenants, so the last shard holds only domains that never move. */
const LAYOUT: [Profile, Profile][] = [
  ["clean", "clean"],
  ["clean", "forwarding"],
  ["clean", "degrading"],
  ["forwarding", "misconfigured"],
  ["clean", "clean"],
  ["forwarding", "degrading"],
  ["clean", "forwarding"],
  ["clean", "misconfigured"],
  ["low", "low"],
  ["low", "misconfigured"],
];
const numbered = new Map<Profile, number>();
const TENANTS = LAYOUT.map((profiles, index) => ({
  key: `t${String(index + 1).padStart(2, "0")}`,
  domains: profiles.map((profile) => {
    const count = (numbered.get(profile) ?? 0) + 1;
    numbered.set(profile, count);
    return { name: `${profile}-${count}.${ZONE}`, profile };
  }),
}));
const DOMAINS = TENANTS.flatMap((tenant) => tenant.domains);
const named = (...profiles: Profile[]) =>
  DOMAINS.filter((domain) => profiles.includes(domain.profile)).map((domain) => domain.name);

let dns: RunningDnsServer;
let emulator: EmulatorHandle;
let folder: string;
const fleet = uniqueFleetName("ramp");
const inventoryPath = () => join(folder, "tenants.yaml");

function inventoryText(server: string, keyName: string): string {
  const file = {
    defaults: {
      group: "Main",
      plan: "Starter",
      dns: { rfc2136: { server, zone: ZONE, keyName, keySecretEnv: SECRET_ENV, ttl: 300 } },
      policy: { target: "reject", evidence: { minDays: 7 } },
    },
    tenants: TENANTS.map((tenant) => ({
      name: `Tenant ${tenant.key}`,
      key: tenant.key,
      domains: tenant.domains.map((domain) => ({ name: domain.name, verify: true })),
    })),
  };
  return `# The partner's customers; the ramp takes a week a step here.\n${stringify(file)}`;
}

const options = () => fleetOptions(emulator, fleet, loadInventory(inventoryPath()), { shardSize: 2 });

async function reportToday(): Promise<string> {
  return (await emulator.control<{ today: string }>("GET", "/clock")).today;
}

async function passRateRequests(): Promise<number> {
  return (await emulator.control<{ byRoute: Record<string, number> }>("GET", "/stats")).byRoute[PASS_RATES_ROUTE] ?? 0;
}

/** An `enforce --write` on the emulator's report day, with the pass-rate requests it sent. */
async function enforce(write = true): Promise<{ report: EnforceReport; requests: number }> {
  const before = await passRateRequests();
  const report = await runEnforce({
    inventoryPath: inventoryPath(),
    settings: settingsOf({ config: emulator.stackConfig }),
    today: await reportToday(),
    write,
  });
  return { report, requests: (await passRateRequests()) - before };
}

/** Each domain's decision kind, and the domains of each kind. */
function kindsOf(report: EnforceReport): Record<string, string[]> {
  const kinds: Record<string, string[]> = {};
  for (const { domain, decision } of report.tenants.flatMap((tenant) => tenant.domains))
    kinds[decision.kind] = [...(kinds[decision.kind] ?? []), domain].sort();
  return kinds;
}

function decisionOf(report: EnforceReport, domain: string) {
  const found = report.tenants.flatMap((tenant) => tenant.domains).find((entry) => entry.domain === domain);
  if (!found) throw new Error(`no decision for ${domain}`);
  return found.decision;
}

/** What BIND serves at each domain's `_dmarc` name, by its policy tags. */
async function servedPolicies(): Promise<Record<string, string>> {
  const served = await Promise.all(
    DOMAINS.map(async (domain) => [domain.name, await dns.served(`_dmarc.${domain.name}`)]),
  );
  return Object.fromEntries(
    served.map(([name, records]) => {
      const [record] = records as string[];
      const tags = /p=(\w+)(?:; pct=(\d+))?/.exec(record ?? "");
      return [name as string, tags ? `${tags[1]}${tags[2] ? `-${tags[2]}` : ""}` : "(none)"];
    }),
  );
}

/** The policy the service observes for each domain (its overview, read from what BIND serves). */
async function observedPolicies(): Promise<Record<string, string>> {
  const client = serviceClient(emulator);
  const today = await reportToday();
  const organizations = [...(await organizationsByName(client)).values()];
  const overviews = await Promise.all(
    organizations.map((id) => client.domainsOverview(id, { from: today, to: today })),
  );
  return Object.fromEntries(overviews.flat().map((overview) => [overview.domain, overview.policy]));
}

function expectedPolicies(stages: Record<string, readonly string[]>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(stages).flatMap(([stage, domains]) => domains.map((domain) => [domain, stage])),
  );
}

const observedOf = (stages: Record<string, string>) =>
  Object.fromEntries(Object.entries(stages).map(([domain, stage]) => [domain, stage.replace(/-\d+$/, "")]));

function ran(report: FleetReport): string[] {
  return report.results.filter((result) => result.status === "done").map((result) => result.shard);
}

async function advanceWeek(): Promise<void> {
  await emulator.control("POST", "/clock", { advanceDays: 7 });
}

describe.skipIf(unavailable !== undefined)("a fleet's policy ramp, by enforce and up, against BIND", () => {
  beforeAll(async () => {
    await useEngine();
    dns = await startDnsServer("bind", "hmac-sha256", { zone: ZONE });
    emulator = await startTestEmulator({ dns: { resolver: dns.address, checkIntervalMs: 100 } });
    process.env[SECRET_ENV] = dns.key.secret;
    folder = mkdtempSync(join(tmpdir(), "dmarc-ramp-"));
    writeFileSync(inventoryPath(), inventoryText(dns.address, dns.key.name));
  }, 600_000);

  afterAll(async () => {
    try {
      if (emulator) await dropFleetStacks(fleetOptions(emulator, fleet, loadInventory(inventoryPath())), fleet);
    } finally {
      delete process.env[SECRET_ENV];
      await emulator?.emulator.close();
      await dns?.stop();
    }
  }, 600_000);

  it("verifies every domain at p=none, then starts each ramp today without touching a shard", async () => {
    const up = await runFleet("up", options());
    expect(up.ok).toBe(true);
    for (const domain of DOMAINS) await emulator.control("PUT", `/reports/${domain.name}`, PROFILES[domain.profile]);
    const none = expectedPolicies({ none: named("clean", "forwarding", "low", "misconfigured", "degrading") });
    expect(await servedPolicies()).toEqual(none);
    expect(await observedPolicies()).toEqual(none);

    const { report, requests } = await enforce();
    // Nothing is held yet: no domain has a stage's day to count from, so no evidence is read.
    expect([kindsOf(report), report.read, requests]).toEqual([
      { start: DOMAINS.map((domain) => domain.name).sort() },
      { domains: 0, requests: 0, failed: 0 },
      0,
    ]);
    expect(readFileSync(inventoryPath(), "utf8")).toMatch(
      /^# The partner's customers; the ramp takes a week a step here\.\n/,
    );
    const again = await runFleet("up", options());
    expect(ran(again)).toEqual([]);
  }, 900_000);

  it("advances exactly the domains whose evidence holds a week later; the others hold with their numbers", async () => {
    await advanceWeek();
    const { report, requests } = await enforce();
    const moving = named("clean", "forwarding", "degrading");
    expect(kindsOf(report)).toEqual({ advance: moving.sort(), hold: named("low", "misconfigured").sort() });
    // One query for all 20 domains of 10 organisations: they share their evidence window.
    expect([report.read.domains, requests]).toEqual([20, 1]);
    expect(enforceText(report)).toContain("evidence of 20 domain(s) read in");
    const low = decisionOf(report, `low-1.${ZONE}`);
    expect(low.kind === "hold" && low.reasons).toEqual(["140 messages, needs 500"]);
    const misconfigured = decisionOf(report, `misconfigured-1.${ZONE}`);
    // Each report type's count is rounded to whole messages: the rate is near 72, not exactly.
    expect(misconfigured.kind === "hold" && misconfigured.reasons).toEqual([
      expect.stringMatching(/^pass rate 72(\.\d)?%, needs 98%$/),
    ]);
    expect(enforceExitCode(report, true)).toBe(FLEET_EXIT.moves.code);
    expect(enforceMarkdown(report)).toContain(
      `| Tenant t01 | \`clean-1.${ZONE}\` | none → quarantine (pct 25): pass rate`,
    );

    const up = await runFleet("up", options());
    expect(up.ok).toBe(true);
    // The last shard holds only domains that did not move: it does not run.
    expect(ran(up).sort()).toEqual([1, 2, 3, 4].map((shard) => `${fleet}-00${shard}`));
    expect(findingsText(up, "Done")).toContain(`~ record _dmarc.clean-1.${ZONE}: policy none → quarantine (pct 25)`);
    const stages = expectedPolicies({ "quarantine-25": moving, none: named("low", "misconfigured") });
    expect(await servedPolicies()).toEqual(stages);
    expect(await observedPolicies()).toEqual(observedOf(stages));
    for (const domain of named("degrading")) await emulator.control("PUT", `/reports/${domain}`, DEGRADED);
  }, 900_000);

  it("advances the clean ones again and proposes the degrading ones back under the floor", async () => {
    await advanceWeek();
    const { report } = await enforce();
    expect(kindsOf(report)).toEqual({
      advance: named("clean", "forwarding").sort(),
      back: named("degrading").sort(),
      hold: named("low", "misconfigured").sort(),
    });
    const back = decisionOf(report, `degrading-1.${ZONE}`);
    expect(back).toMatchObject({ kind: "back", from: { p: "quarantine", pct: 25 }, to: { p: "none", pct: 100 } });

    const up = await runFleet("up", options());
    expect(up.ok).toBe(true);
    const stages = expectedPolicies({
      quarantine: named("clean", "forwarding"),
      none: named("low", "misconfigured", "degrading"),
    });
    expect(await servedPolicies()).toEqual(stages);
    expect(await observedPolicies()).toEqual(observedOf(stages));
  }, 900_000);

  it("names a p= changed by hand as drift, and up puts the file's stage back", async () => {
    const host = `_dmarc.clean-1.${ZONE}`;
    const [record] = await dns.served(host);
    const published = (record ?? "").replace(/^TXT (.*) @300$/, "$1");
    await dns.put(host, "TXT", published.replace("p=quarantine", "p=none"));

    const drift = await runFleet("drift", options());
    expect(drift.ok).toBe(true);
    expect(findingsText(drift, "Drift")).toContain(
      `! record ${host}: changed on the server (policy quarantine → none)`,
    );
    const up = await runFleet("up", options());
    expect(up.ok).toBe(true);
    expect(await dns.served(host)).toEqual([record]);
  }, 900_000);

  it("proposes nothing with no new evidence, and --write leaves the file byte for byte", async () => {
    const before = readFileSync(inventoryPath());
    const { report } = await enforce();
    expect(Object.keys(kindsOf(report))).toEqual(["hold"]);
    expect([report.written, enforceExitCode(report, true)]).toEqual([false, FLEET_EXIT.ok.code]);
    expect(readFileSync(inventoryPath()).equals(before)).toBe(true);
  }, 300_000);
});
