import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Stack } from "@pulumi/pulumi/automation";
import { STACK_POLICY_KEY, stackPolicies, Tenant } from "pulumi-dmarc-partner";
import { type EnforceReport, FLEET_EXIT, main } from "pulumi-dmarc-partner/fleet";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseDocument } from "yaml";
import { serviceClient } from "../fleet/support";
import { dnsServersUnavailable, type RunningDnsServer, startDnsServer } from "../support/dnsServers";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { createTestStack } from "../support/engine";
import { DEGRADED, rfc2136Publisher, SENDER_PROFILES } from "../support/ramp";

// A Pulumi program's DMARC policy ramp end to end, with no inventory: a
// Tenant (five domains, its plan's most) whose domains take their `policy` from the stack's configuration
// (`stackPolicies()`), published to BIND. Rounds of `dmarc-fleet enforce
// --stack <name> --write` and `pulumi up`, the emulator's report clock moved
// a week between them, advance exactly the domains whose evidence holds, as
// BIND serves and the service observes; the others hold; a fall under the
// floor steps back; a domain parked at reject keeps it; a second run the same
// day leaves the configuration file byte for byte.

const unavailable = await dnsServersUnavailable();
if (unavailable) console.warn(`Skipping the program's policy ramp by enforce: ${unavailable}`);

const ZONE = "stackramp.example";
const PROJECT = "stack-ramp";
const KEY = `${PROJECT}:${STACK_POLICY_KEY}`;
const PASS_RATES_ROUTE = "POST /v1/dmarc/rua/auth-pass-rates";

const { clean, forwarding, misconfigured, degrading } = SENDER_PROFILES;
const SENDERS = { clean, forwarding, misconfigured, degrading };
/** Each domain by its sender; the parked one sends no mail. */
type Sender = keyof typeof SENDERS | "parked";
const domainOf = (sender: Sender) => `${sender}.${ZONE}`;
const REPORTING = Object.keys(SENDERS) as (keyof typeof SENDERS)[];
const DOMAINS = [...REPORTING, "parked" as const].map(domainOf);
const named = (...senders: Sender[]) => senders.map(domainOf).sort();

/** The ramps as the partner first writes them: a target, a week a step; the parked domain already at reject. */
const POLICIES = {
  ...Object.fromEntries(REPORTING.map((sender) => [domainOf(sender), { target: "reject", evidence: { minDays: 7 } }])),
  [domainOf("parked")]: { target: "reject", stage: "reject" },
};

let dns: RunningDnsServer;
let emulator: EmulatorHandle;
let stack: Stack;
let configPath: string;

async function reportToday(): Promise<string> {
  return (await emulator.control<{ today: string }>("GET", "/clock")).today;
}

async function passRateRequests(): Promise<number> {
  return (await emulator.control<{ byRoute: Record<string, number> }>("GET", "/stats")).byRoute[PASS_RATES_ROUTE] ?? 0;
}

/** `dmarc-fleet enforce --stack <name> --write` on the emulator's report day: its exit code, report, Markdown and requests. */
async function enforce(): Promise<{ code: number; report: EnforceReport; markdown: string; requests: number }> {
  const before = await passRateRequests();
  const markdownPath = join(stack.workspace.workDir, "ramp.md");
  let stdout = "";
  const spied = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    stdout += String(chunk);
    return true;
  });
  let code: number;
  try {
    code = await main([
      "enforce",
      ...["--stack", stack.name, "--cwd", stack.workspace.workDir, "--today", await reportToday()],
      ...["--write", "--json", "--detailed-exitcode", "--markdown", markdownPath],
    ]);
  } finally {
    spied.mockRestore();
  }
  const markdown = readFileSync(markdownPath, "utf8");
  return { code, report: JSON.parse(stdout) as EnforceReport, markdown, requests: (await passRateRequests()) - before };
}

/** Each decision kind, and the domains of each kind. */
function kindsOf(report: EnforceReport): Record<string, string[]> {
  const kinds: Record<string, string[]> = {};
  for (const { domain, decision } of report.tenants.flatMap((tenant) => tenant.domains))
    kinds[decision.kind] = [...(kinds[decision.kind] ?? []), domain].sort();
  return kinds;
}

/** Each domain's stage in the configuration file, as the program reads it. */
function configuredStages(): Record<string, string | undefined> {
  const config = parseDocument(readFileSync(configPath, "utf8")).toJS().config as Record<string, unknown>;
  const policies = config[KEY] as Record<string, { stage?: string }>;
  return Object.fromEntries(Object.entries(policies).map(([domain, policy]) => [domain, policy.stage]));
}

/** What BIND serves at each domain's `_dmarc` name, by its policy tags. */
async function servedStages(): Promise<Record<string, string>> {
  const served = await Promise.all(DOMAINS.map(async (domain) => [domain, await dns.served(`_dmarc.${domain}`)]));
  return Object.fromEntries(
    served.map(([domain, records]) => {
      const tags = /p=(\w+)(?:; pct=(\d+))?/.exec((records as string[])[0] ?? "");
      return [domain as string, tags ? `${tags[1]}${tags[2] ? `-${tags[2]}` : ""}` : "(none)"];
    }),
  );
}

/** The policy the service observes for each domain (its overview, read from what BIND serves). */
async function observedPolicies(): Promise<Record<string, string>> {
  const organizationId = (await stack.outputs()).organizationId?.value as string;
  const today = await reportToday();
  const overviews = await serviceClient(emulator).domainsOverview(organizationId, { from: today, to: today });
  return Object.fromEntries(overviews.map((overview) => [overview.domain, overview.policy]));
}

const stagesOf = (stages: Record<string, readonly string[]>) =>
  Object.fromEntries(
    Object.entries(stages)
      .flatMap(([stage, domains]) => domains.map((domain) => [domain, stage]))
      .sort(),
  );
const observedOf = (stages: Record<string, string>) =>
  Object.fromEntries(Object.entries(stages).map(([domain, stage]) => [domain, stage.replace(/-\d+$/, "")]));

/** `pulumi up`; then BIND and the service each show every domain at its configured stage. */
async function upAndExpect(stages: Record<string, string>): Promise<void> {
  const up = await stack.up();
  expect(up.summary.result).toBe("succeeded");
  expect(configuredStages()).toEqual(stages);
  expect(await servedStages()).toEqual(stages);
  expect(await observedPolicies()).toEqual(observedOf(stages));
}

const advanceWeek = () => emulator.control("POST", "/clock", { advanceDays: 7 });

describe.skipIf(unavailable !== undefined)(
  "a program's policy ramp, by enforce --stack and pulumi up, against BIND",
  () => {
    beforeAll(async () => {
      dns = await startDnsServer("bind", "hmac-sha256", { zone: ZONE });
      emulator = await startTestEmulator({ dns: { resolver: dns.address, checkIntervalMs: 100 } });
      const publish = rfc2136Publisher(dns);
      stack = await createTestStack({
        projectName: PROJECT,
        config: emulator.stackConfig,
        program: async () => {
          const policies = stackPolicies();
          const tenant = new Tenant("acme", {
            name: "Acme",
            group: "Production",
            subscription: "none",
            domains: DOMAINS.map((name) => ({ name, verify: true, policy: policies[name] })),
            publishRecord: (record, _domain, opts, name) => publish(name, record, opts),
          });
          return { organizationId: tenant.organizationId, records: tenant.records };
        },
      });
      configPath = join(stack.workspace.workDir, `Pulumi.${stack.name}.yaml`);
      const document = parseDocument(readFileSync(configPath, "utf8"));
      document.setIn(["config", KEY], document.createNode(POLICIES));
      document.commentBefore = " Acme's stack; dmarc-fleet enforce --stack moves each domain's stage by pull request.";
      writeFileSync(configPath, document.toString());
    }, 600_000);

    afterAll(async () => {
      try {
        if (stack) {
          await stack.destroy();
          await stack.workspace.removeStack(stack.name, { force: true });
        }
      } finally {
        await emulator?.emulator.close();
        await dns?.stop();
      }
    }, 600_000);

    it("publishes each domain at its configured stage, then starts every ramp today, the parked one at reject", async () => {
      const up = await stack.up();
      expect(up.summary.result).toBe("succeeded");
      const published = stagesOf({ none: named("clean", "forwarding", "misconfigured", "degrading") });
      expect(await servedStages()).toEqual({ ...published, [domainOf("parked")]: "reject" });
      for (const sender of REPORTING) await emulator.control("PUT", `/reports/${domainOf(sender)}`, SENDERS[sender]);

      const { code, report, requests } = await enforce();
      // No stage has a day to count from yet: nothing is read.
      expect([kindsOf(report), report.read, requests, code]).toEqual([
        { start: [...DOMAINS].sort() },
        { domains: 0, requests: 0, failed: 0 },
        0,
        FLEET_EXIT.moves.code,
      ]);
      expect(report).toMatchObject({ stack: stack.name, config: `Pulumi.${stack.name}.yaml`, written: true });
      const text = readFileSync(configPath, "utf8");
      expect(text).toMatch(
        /^# Acme's stack; dmarc-fleet enforce --stack moves each domain's stage by pull request\.\n/,
      );
      expect(text).toContain(
        `${domainOf("parked")}:\n      target: reject\n      stage: reject\n      since: "${report.today}"\n`,
      );
      await upAndExpect({ ...published, [domainOf("parked")]: "reject" });
    }, 900_000);

    it("advances exactly the domains whose evidence holds a week later, in one request", async () => {
      await advanceWeek();
      const { code, report, markdown, requests } = await enforce();
      expect(kindsOf(report)).toEqual({
        advance: named("clean", "forwarding", "degrading"),
        hold: named("misconfigured"),
        target: named("parked"),
      });
      // Every domain moved the same day, so they share one evidence window: one query.
      expect([report.read.domains, requests, code]).toEqual([5, 1, FLEET_EXIT.moves.code]);
      expect(markdown).toContain(
        `| stack ${stack.name} | \`${domainOf("clean")}\` | none → quarantine (pct 25): pass rate`,
      );
      expect(markdown).toContain(`\`pulumi up --stack ${stack.name}\` then republishes those records`);
      await upAndExpect({
        ...stagesOf({
          "quarantine-25": named("clean", "forwarding", "degrading"),
          none: named("misconfigured"),
        }),
        [domainOf("parked")]: "reject",
      });
      await emulator.control("PUT", `/reports/${domainOf("degrading")}`, DEGRADED);
    }, 900_000);

    it("advances the clean ones again and steps the one under the floor back", async () => {
      await advanceWeek();
      const { report } = await enforce();
      expect(kindsOf(report)).toEqual({
        advance: named("clean", "forwarding"),
        back: named("degrading"),
        hold: named("misconfigured"),
        target: named("parked"),
      });
      await upAndExpect({
        ...stagesOf({ quarantine: named("clean", "forwarding"), none: named("misconfigured", "degrading") }),
        [domainOf("parked")]: "reject",
      });
    }, 900_000);

    it("proposes nothing on a second run the same day, and leaves the configuration file byte for byte", async () => {
      const before = readFileSync(configPath);
      const { code, report } = await enforce();
      expect(kindsOf(report)).toEqual({
        hold: named("clean", "forwarding", "degrading", "misconfigured"),
        target: named("parked"),
      });
      expect([report.written, code]).toEqual([false, FLEET_EXIT.ok.code]);
      expect(readFileSync(configPath).equals(before)).toBe(true);
    }, 300_000);
  },
);
