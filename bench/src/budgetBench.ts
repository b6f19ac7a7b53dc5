import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalWorkspace } from "@pulumi/pulumi/automation";
import { stringify } from "yaml";
import { ciJob } from "./ciJob";
import type { BenchEmulator } from "./emulator";
import { startPostgres } from "./postgres";
import { projectFolder } from "./stack";

// `npm run bench -- --budget`: one partner's runs at once against a service
// admitting the published 60 requests a minute, whose 429 says nothing of
// when to come back. Two fleets on one machine sharing its budget, the
// GitOps guide's matrix (three `up --shard` jobs from their own copies, on
// one PostgreSQL backend), and two fleets sharing no store: each
// scenario's share of the limit and its 429 count.

const LIMIT_PER_MINUTE = 60;
const PACE_PER_MINUTE = 57;
const SHARDS = 3;

export interface BudgetBenchHooks {
  emulator: BenchEmulator;
  projectRoot: string;
  /** Tenants of each fleet (the matrix's fleet has twice as many, in three shards). */
  tenants: number;
  say(message: string): void;
}

export interface BudgetScenario {
  scenario: string;
  runs: number;
  failedRuns: number;
  requests: number;
  rateLimited: number;
  /** Admitted requests after the first over the span from the first request to the last answer, per the limit. */
  shareOfLimit: number;
  seconds: number;
}

interface Checkout {
  cwd: string;
  env: Record<string, string>;
  configStack: string;
  fleet: string;
}

/** A partner's project of its own: inventory, config stack and state backend (a folder of its own unless given). */
async function project(hooks: BudgetBenchHooks, name: string, tenants: number, backend?: string, store?: string) {
  const cwd = projectFolder(hooks.projectRoot, `dmarc-bench-budget-${name}`);
  const own = mkdtempSync(join(tmpdir(), "dmarc-bench-budget-"));
  const backendUrl = backend ?? `file://${join(own, "state")}`;
  if (!backend) mkdirSync(join(own, "state"));
  const env = { PULUMI_HOME: join(own, "pulumi-home"), TMPDIR: own, PULUMI_BACKEND_URL: backendUrl };
  writeFileSync(join(cwd, "Pulumi.yaml"), stringify({ name: "dmarc-bench-budget", runtime: "nodejs" }));
  const entries = Array.from({ length: tenants }, (_, index) => {
    const key = `${name}-${index}`;
    return { name: `Budget ${key}`, key, group: "Main", plan: "Starter", domains: [{ name: `${key}.example` }] };
  });
  writeFileSync(join(cwd, "tenants.yaml"), stringify({ tenants: entries }));
  const configStack = `${name}-config`;
  const workspace = await LocalWorkspace.create({ workDir: cwd, envVars: env });
  await workspace.createStack(configStack);
  const { emulator } = hooks;
  await workspace.setAllConfig(configStack, {
    "dmarc:baseUrl": { value: emulator.url },
    "dmarc:clientId": { value: emulator.partner.clientId },
    "dmarc:clientSecret": { value: emulator.partner.clientSecret, secret: true },
    "dmarc:requestsPerMinute": { value: String(PACE_PER_MINUTE) },
    ...(store ? { "dmarc:budgetStore": { value: store } } : {}),
  });
  return { cwd, env, configStack, fleet: name } satisfies Checkout;
}

/** Runs `jobs` at once on a fresh limit, and what the service saw of them. */
async function scenario(
  hooks: BudgetBenchHooks,
  name: string,
  jobs: ReadonlyArray<{ checkout: Checkout; args: string[] }>,
): Promise<BudgetScenario> {
  const { emulator } = hooks;
  await emulator.shapeTraffic(0, LIMIT_PER_MINUTE, "none", 60);
  const before = await emulator.stats();
  await emulator.openWindow();
  hooks.say(`budget: ${name}, ${jobs.length} runs at once`);
  const results = await Promise.all(
    jobs.map(
      ({ checkout, args }) =>
        ciJob(checkout.cwd, checkout.env, [...args, "--config-stack", checkout.configStack, "--fleet", checkout.fleet])
          .done,
    ),
  );
  for (const result of results) if (result.code !== 0) hooks.say(`budget: a run failed:\n${result.stderr}`);
  const after = await emulator.stats();
  const requests = after.requests - before.requests;
  const rateLimited = (after.byStatus["429"] ?? 0) - (before.byStatus["429"] ?? 0);
  const { firstRequestAt, lastAnsweredAt } = after.window;
  const seconds = ((lastAnsweredAt ?? 0) - (firstRequestAt ?? 0)) / 1000;
  const shareOfLimit = (requests - rateLimited - 1) / ((seconds / 60) * LIMIT_PER_MINUTE);
  return {
    scenario: name,
    runs: jobs.length,
    failedRuns: results.filter((result) => result.code !== 0).length,
    requests,
    rateLimited,
    shareOfLimit: Math.round(shareOfLimit * 1000) / 1000,
    seconds: Math.round(seconds),
  };
}

export async function budgetBench(hooks: BudgetBenchHooks): Promise<BudgetScenario[]> {
  const stamp = Date.now().toString(36);
  const rows: BudgetScenario[] = [];
  const up = ["up", "--json"];
  const machine = [
    await project(hooks, `m1-${stamp}`, hooks.tenants),
    await project(hooks, `m2-${stamp}`, hooks.tenants),
  ];
  rows.push(
    await scenario(
      hooks,
      "two fleets, one machine",
      machine.map((checkout) => ({ checkout, args: up })),
    ),
  );

  const postgres = await startPostgres();
  try {
    const name = `ci-${stamp}`;
    const shardSize = Math.ceil((2 * hooks.tenants) / SHARDS);
    const first = await project(hooks, name, 2 * hooks.tenants, postgres.backendUrl);
    // Each job from a copy of its own, as separate runners check the project out.
    const jobs = Array.from({ length: SHARDS }, (_, index) => ({
      checkout: {
        ...first,
        env: { ...first.env, PULUMI_HOME: join(mkdtempSync(join(tmpdir(), "dmarc-bench-job-")), "home") },
      },
      args: [
        "up",
        "--json",
        "--shard-size",
        String(shardSize),
        "--shard",
        `${name}-${String(index + 1).padStart(3, "0")}`,
      ],
    }));
    rows.push(await scenario(hooks, "three CI jobs, one PostgreSQL backend", jobs));
  } finally {
    await postgres.stop();
  }

  const alone = [
    await project(hooks, `o1-${stamp}`, hooks.tenants, undefined, "off"),
    await project(hooks, `o2-${stamp}`, hooks.tenants, undefined, "off"),
  ];
  rows.push(
    await scenario(
      hooks,
      "two fleets, no store",
      alone.map((checkout) => ({ checkout, args: up })),
    ),
  );
  return rows;
}

export function budgetBenchMarkdown(rows: readonly BudgetScenario[]): string {
  const lines = [
    `One partner's runs at once against ${LIMIT_PER_MINUTE} requests a minute (429 without hints), each paced at ${PACE_PER_MINUTE}:`,
    "",
    "| scenario | runs (failed) | requests | answered 429 | share of the limit | seconds |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows.map(
      (row) =>
        `| ${row.scenario} | ${row.runs} (${row.failedRuns}) | ${row.requests} | ${row.rateLimited} (${((100 * row.rateLimited) / Math.max(1, row.requests)).toFixed(1)}%) | ${(100 * row.shareOfLimit).toFixed(1)}% | ${row.seconds} |`,
    ),
  ];
  return `${lines.join("\n")}\n`;
}
