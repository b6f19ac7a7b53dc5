import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Inventory, loadInventory } from "pulumi-dmarc-partner";
import { runFleet, runImport } from "pulumi-dmarc-partner/fleet";
import type { BenchEmulator, EmulatorStats } from "./emulator";
import { type FleetSpec, fleetSpec } from "./fleet";
import { benchFleetOptions, changesOf, type FleetSetup } from "./fleetSweep";

// `npm run bench -- --import --tenants 1000`: an account of N organisations
// made through the client alone (the baseline's up of the generated fleet:
// organisation, group, webhook, subscription and --domains domains each),
// then `dmarc-fleet import` into a new file, the same with `--check`, and the
// fleet's `up` of the file written: how long each takes, what it asks of the
// service per organisation, and that `up` adopts with reads only.

export interface ImportBenchHooks extends FleetSetup {
  outDir: string;
  domains: number;
  say(message: string): void;
  /** Makes the spec's tenants on the service through the client (the baseline's up). */
  seed(spec: FleetSpec): Promise<void>;
}

/** One step, as the emulator counted it. */
interface ImportStep {
  step: string;
  wallSeconds: number;
  /** API requests, token requests included. */
  requests: number;
  requestsByRoute: Record<string, number>;
  rateLimited: number;
  /** Requests that are not reads (the token's aside): 0 for every step here. */
  writes: number;
}

interface ImportBenchReport {
  organizations: number;
  domainsPerOrganization: number;
  pace: number | null;
  steps: ImportStep[];
  /** Requests of `import` per organisation beyond the organisation pages, the catalogue and the partner's webhooks. */
  importRequestsPerOrganization: number;
  /** Tenants the import wrote (every organisation of the generated account has an entry). */
  tenantsWritten: number;
  /** Shards the fleet's `up` of the file used. */
  shards: number;
}

const TOKEN_ROUTE = "POST /auth/token";
/** Requests an import sends once per run rather than per organisation. */
const PER_RUN_ROUTES = ["GET /v1/organizations", "GET /v1/partners/plans"];

function added(after: EmulatorStats, before: EmulatorStats): Record<string, number> {
  return Object.fromEntries(
    Object.entries(after.byRoute)
      .map(([route, count]): [string, number] => [route, count - (before.byRoute[route] ?? 0)])
      .filter(([, count]) => count > 0),
  );
}

async function timedStep<T>(
  emulator: BenchEmulator,
  step: string,
  action: () => Promise<T>,
): Promise<{ value: T; step: ImportStep }> {
  const before = await emulator.stats();
  const start = performance.now();
  const value = await action();
  const wallSeconds = (performance.now() - start) / 1000;
  const after = await emulator.stats();
  const requestsByRoute = added(after, before);
  return {
    value,
    step: {
      step,
      wallSeconds,
      requests: after.requests - before.requests,
      requestsByRoute,
      rateLimited: after.rateLimited - before.rateLimited,
      writes: Object.entries(requestsByRoute)
        .filter(([route]) => !route.startsWith("GET ") && route !== TOKEN_ROUTE)
        .reduce((sum, [, count]) => sum + count, 0),
    },
  };
}

function importRequestsPerOrganization(step: ImportStep, organizations: number): number {
  const perRun = PER_RUN_ROUTES.reduce((sum, route) => sum + (step.requestsByRoute[route] ?? 0), 0);
  const token = step.requestsByRoute[TOKEN_ROUTE] ?? 0;
  // The partner's own webhooks: one list, beside the organisations' owned ones on the same route.
  return (step.requests - perRun - token - 1) / organizations;
}

function importBenchMarkdown(report: ImportBenchReport): string {
  const lines = [
    `Import of an account of ${report.organizations} organisations (${report.domainsPerOrganization} domains, a group, a webhook and a subscription each), pace ${report.pace ?? "off"}; ${report.tenantsWritten} tenants written.`,
    "",
    "| step | wall s | requests | req/s | 429s | writes |",
    "| ---- | ------ | -------- | ----- | ---- | ------ |",
    ...report.steps.map(
      (step) =>
        `| ${step.step} | ${step.wallSeconds.toFixed(2)} | ${step.requests} | ${(step.requests / step.wallSeconds).toFixed(1)} | ${step.rateLimited} | ${step.writes} |`,
    ),
    "",
    `Requests of import per organisation, beyond the organisation pages, the catalogue, the partner's webhooks and the token: ${report.importRequestsPerOrganization.toFixed(2)}. The fleet's up used ${report.shards} shards.`,
  ];
  return `${lines.join("\n")}\n`;
}

/** Seeds the account, imports it twice (plain, then --check) and deploys the file written; writes import.{md,json}. */
export async function importBench(
  hooks: ImportBenchHooks,
  tenants: number,
  plans: Parameters<typeof fleetSpec>[0],
): Promise<string> {
  const spec = fleetSpec(plans, tenants, hooks.domains);
  hooks.say(`import bench: seeding ${tenants} organisations through the client`);
  await hooks.seed(spec);
  const empty: Inventory = { tenants: [], offboard: [], source: "bench", folder: hooks.outDir };
  const options = benchFleetOptions(hooks, tenants, empty);
  const steps: ImportStep[] = [];
  const imported = async (label: string, file: string, check: boolean) => {
    const inventoryPath = join(hooks.outDir, file);
    rmSync(inventoryPath, { force: true });
    hooks.say(`import bench: ${label}...`);
    const { value, step } = await timedStep(hooks.emulator, label, () =>
      runImport({ ...options, inventoryPath, ...(check ? { check: true } : {}) }),
    );
    hooks.say(`import bench: ${label}: ${step.wallSeconds.toFixed(2)} s, ${step.requests} requests`);
    steps.push(step);
    return { report: value, inventoryPath };
  };
  const plain = await imported("import", `import-${tenants}.yaml`, false);
  await imported("import --check", `import-${tenants}-checked.yaml`, true);

  const inventory = loadInventory(plain.inventoryPath);
  hooks.say(`import bench: fleet up of the ${inventory.tenants.length} tenants written...`);
  const up = await timedStep(hooks.emulator, "fleet up of the file (adoption)", async () =>
    changesOf(await runFleet("up", { ...options, inventory })),
  );
  steps.push(up.step);
  if (up.step.writes > 0) throw new Error(`the fleet's up of the imported file sent ${up.step.writes} write requests`);
  // Imported tenants are `onDelete: keep`: the shards forget them, the service keeps them.
  await runFleet("destroy", options);

  const report: ImportBenchReport = {
    organizations: tenants,
    domainsPerOrganization: hooks.domains,
    pace: hooks.pace ?? null,
    steps,
    importRequestsPerOrganization: importRequestsPerOrganization(steps[0] as ImportStep, tenants),
    tenantsWritten: plain.report.written.length,
    shards: Math.ceil(inventory.tenants.length / options.shardSize),
  };
  const markdown = importBenchMarkdown(report);
  writeFileSync(join(hooks.outDir, "import.json"), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(hooks.outDir, "import.md"), markdown);
  hooks.say(`wrote import.md and import.json to ${hooks.outDir}`);
  return markdown;
}
