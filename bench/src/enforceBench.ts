import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Plan } from "pulumi-dmarc-partner/api";
import { runEnforce } from "pulumi-dmarc-partner/fleet";
import { stringify } from "yaml";
import type { BenchEmulator } from "./emulator";
import { type FleetSpec, fleetSpec, tenantsOf } from "./fleet";
import type { FleetSetup } from "./fleetSweep";

// `npm run bench -- --enforce --tenants 1000`: an account of N organisations
// made through the client alone, every domain on a policy ramp that started
// two weeks earlier on the emulator's report clock, then one `dmarc-fleet
// enforce`: how many requests its evidence costs, counted by the emulator.

export interface EnforceBenchHooks extends FleetSetup {
  outDir: string;
  domains: number;
  say(message: string): void;
  /** Makes the spec's tenants on the service through the client (the baseline's up). */
  seed(spec: FleetSpec): Promise<void>;
}

interface EnforceBenchReport {
  organizations: number;
  domains: number;
  wallSeconds: number;
  /** Domains whose evidence the run read. */
  domainsRead: number;
  /** Pass-rate requests, and every API request of the run (the token's included). */
  passRateRequests: number;
  requests: number;
  decisions: Record<string, number>;
}

const PASS_RATES_ROUTE = "POST /v1/dmarc/rua/auth-pass-rates";
const DAYS_HELD = 14;

async function control<T>(emulator: BenchEmulator, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${emulator.url}/_emulator${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`emulator control ${method} ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** The account as an inventory whose every domain began its ramp on `since`. */
function rampInventory(spec: FleetSpec, since: string): string {
  const tenants = tenantsOf(spec).map((tenant) => ({
    name: tenant.orgName,
    key: tenant.key,
    group: tenant.groupName,
    plan: spec.plan,
    domains: tenant.domains.map((name) => ({ name, policy: { stage: "none", since } })),
  }));
  return stringify({ defaults: { policy: { target: "reject" } }, tenants });
}

function enforceBenchMarkdown(report: EnforceBenchReport): string {
  const decisions = Object.entries(report.decisions)
    .map(([kind, count]) => `${count} ${kind}`)
    .join(", ");
  return [
    `Policy ramp evidence of ${report.organizations} organisations (${report.domains} domains, every one read after ${DAYS_HELD} days at none): ${decisions}.`,
    "",
    "| wall s | domains read | pass-rate requests | all requests | requests per organisation |",
    "| ------ | ------------ | ------------------ | ------------ | ------------------------- |",
    `| ${report.wallSeconds.toFixed(2)} | ${report.domainsRead} | ${report.passRateRequests} | ${report.requests} | ${(report.requests / report.organizations).toFixed(3)} |`,
    "",
  ].join("\n");
}

/** Seeds the account, starts every ramp two report weeks ago, runs enforce once; writes enforce.{md,json}. */
export async function enforceBench(hooks: EnforceBenchHooks, tenants: number, plans: readonly Plan[]): Promise<string> {
  const spec = fleetSpec(plans, tenants, hooks.domains);
  hooks.say(`enforce bench: seeding ${tenants} organisations through the client`);
  await hooks.seed(spec);
  const { today: since } = await control<{ today: string }>(hooks.emulator, "GET", "/clock");
  const { today } = await control<{ today: string }>(hooks.emulator, "POST", "/clock", { advanceDays: DAYS_HELD });
  const inventoryPath = join(hooks.outDir, `enforce-${tenants}.yaml`);
  writeFileSync(inventoryPath, rampInventory(spec, since));
  const { emulator, pace } = hooks;
  const settings = {
    baseUrl: emulator.url,
    clientId: emulator.partner.clientId,
    clientSecret: emulator.partner.clientSecret,
    partnerId: emulator.partner.id,
    ...(pace === undefined ? {} : { requestsPerSecond: String(pace) }),
  };
  hooks.say(`enforce bench: dmarc-fleet enforce over ${tenants * hooks.domains} domains...`);
  const before = await hooks.emulator.stats();
  const start = performance.now();
  const run = await runEnforce({ inventoryPath, settings, today });
  const wallSeconds = (performance.now() - start) / 1000;
  const after = await hooks.emulator.stats();
  const report: EnforceBenchReport = {
    organizations: tenants,
    domains: tenants * hooks.domains,
    wallSeconds,
    domainsRead: run.read.domains,
    passRateRequests: (after.byRoute[PASS_RATES_ROUTE] ?? 0) - (before.byRoute[PASS_RATES_ROUTE] ?? 0),
    requests: after.requests - before.requests,
    decisions: Object.fromEntries(Object.entries(run.totals).filter(([, count]) => count > 0)),
  };
  const markdown = enforceBenchMarkdown(report);
  writeFileSync(join(hooks.outDir, "enforce.json"), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(hooks.outDir, "enforce.md"), markdown);
  hooks.say(`wrote enforce.md and enforce.json to ${hooks.outDir}`);
  return markdown;
}
