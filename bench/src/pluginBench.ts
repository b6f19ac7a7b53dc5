import { createRequire } from "node:module";
import { join } from "node:path";
import type * as pulumi from "@pulumi/pulumi";
import type { PulumiFn } from "@pulumi/pulumi/automation";
import * as dmarc from "pulumi-dmarc-partner";
import type { Plan } from "pulumi-dmarc-partner/api";
import { type FleetSpec, fleetSpec, tenantsOf } from "./fleet";
import {
  describeMachine,
  describeSettings,
  fixed,
  type Machine,
  type PhaseSample,
  ratio,
  type Settings,
  table,
} from "./report";
import { type BenchProject, createBenchStack, PROJECT_NAME, runStackPhases, type StackSettings } from "./stack";
import type { StateFootprint } from "./state";

// `npm run bench -- --plugin --tenants 50`: one stack of N tenants declared
// by the same TypeScript program twice, first through the package's dynamic
// resources, then through the TypeScript SDK generated from the provider
// plugin's schema (`npm run sdk`), the plugin serving it: the language is
// the same, so what differs is the provider. Each side runs `up` from
// nothing, a no-change `preview` and `destroy`, with the CPU of the engine,
// of the program (the bench's own process, which hosts the inline program)
// and of the provider process, and the checkpoint after `up`.

type PluginSideName = "dynamic" | "plugin";
type PluginPhase = "up" | "preview" | "destroy";
const PLUGIN_PHASES: readonly PluginPhase[] = ["up", "preview", "destroy"];

/** Domains of the tenants in turn: one, then two. */
const DOMAINS_AT_MOST = 2;
/** Objects of a tenant besides its domains: organisation, group, subscription, webhook, invitation. */
const FIXED_RESOURCES = 5;
const WEBHOOK_EVENTS: "domain.verified"[] = ["domain.verified"];
const MiB = 1024 * 1024;

export interface PluginBenchHooks {
  projectRoot: string;
  /** The folder holding `pulumi-resource-dmarc`: the npm package's launcher (provider/bin), or the executable's. */
  pluginFolder: string;
  outDir: string;
  stackSettings: StackSettings;
  say(message: string): void;
  /** Times the action with what the emulator and /proc saw of it. */
  sample(label: string, action: () => Promise<Record<string, number> | null>): Promise<PhaseSample>;
}

export interface PluginSide {
  side: PluginSideName;
  phases: Array<PhaseSample & { phase: PluginPhase }>;
  /** The checkpoint after `up`; null when the backend is not a file backend. */
  state: StateFootprint | null;
}

export interface PluginBenchResult {
  /** The generated fleet's names and plan; its tenants have one domain and two in turn. */
  spec: FleetSpec;
  /** Domains of all tenants together. */
  domains: number;
  /** Resources the program declares (the stack and provider resources aside). */
  resources: number;
  sides: PluginSide[];
  pulumiVersion: string;
}

type Input<T> = pulumi.Input<T>;
type Made<K extends string> = pulumi.CustomResource & Record<K, pulumi.Output<string>>;
type Options = pulumi.CustomResourceOptions | undefined;

/** What a program declares a tenant with: the package's resource classes, or the SDK's, and a price lookup. */
interface Kit {
  Organization: new (name: string, args: { name: string }) => Made<"organizationId">;
  DomainGroup: new (name: string, args: { organizationId: Input<string>; name: string }) => Made<"groupId">;
  Domain: new (
    name: string,
    args: { organizationId: Input<string>; domain: string; groupId: Input<string>; declaredTogether: number },
    opts?: Options,
  ) => pulumi.CustomResource;
  Subscription: new (name: string, args: { organizationId: Input<string>; priceId: Input<string> }) => Made<"id">;
  Webhook: new (
    name: string,
    args: { name: string; url: string; events: typeof WEBHOOK_EVENTS; ownerId: Input<string> },
  ) => pulumi.CustomResource;
  Invitation: new (name: string, args: { organizationId: Input<string>; email: string }) => pulumi.CustomResource;
  priceId(plan: string): Input<string>;
}

/** Domains of the tenant at `index`: one, then two, in turn. */
const domainsOf = (domains: readonly string[], index: number) => domains.slice(0, 1 + (index % DOMAINS_AT_MOST));

/** Each tenant as a partner's program declares it: one price lookup per subscription, domains after the plan if they must wait. */
function tenantsProgram(spec: FleetSpec, kit: Kit): PulumiFn {
  return async () => {
    tenantsOf(spec).forEach((tenant, index) => {
      const { organizationId } = new kit.Organization(`${tenant.key}-org`, { name: tenant.orgName });
      const group = new kit.DomainGroup(`${tenant.key}-group`, { organizationId, name: tenant.groupName });
      const plan = new kit.Subscription(`${tenant.key}-plan`, { organizationId, priceId: kit.priceId(spec.plan) });
      const domains = domainsOf(tenant.domains, index);
      for (const domain of domains) {
        const args = { organizationId, domain, groupId: group.groupId, declaredTogether: domains.length };
        new kit.Domain(domain, args, spec.domainsWaitForSubscription ? { dependsOn: [plan] } : undefined);
      }
      // The organisation as owner: the emulator allows five webhooks per owner, the partner id would run out.
      const hook = {
        name: tenant.webhookName,
        url: tenant.webhookUrl,
        events: WEBHOOK_EVENTS,
        ownerId: organizationId,
      };
      new kit.Webhook(`${tenant.key}-hook`, hook);
      new kit.Invitation(`${tenant.key}-admin`, { organizationId, email: `admin@${tenant.key}.bench.example` });
    });
    return {};
  };
}

const dynamicKit: Kit = {
  Organization: dmarc.Organization,
  DomainGroup: dmarc.DomainGroup,
  Domain: dmarc.Domain,
  Subscription: dmarc.Subscription,
  Webhook: dmarc.Webhook,
  Invitation: dmarc.Invitation,
  priceId: (plan) => dmarc.getPriceId({ plan }),
};

/** The generated TypeScript SDK, compiled, with the price lookup as the plugin's `getPriceId` invoke. */
async function sdkKit(hooks: PluginBenchHooks): Promise<Kit> {
  // scripts/ is ECMAScript modules, run beside the bench as test/plugin/sdk.test.ts runs it.
  const { generateSdks } = await import("../../scripts/sdk/index.mjs");
  const { compileNodejsSdk } = await import("../../scripts/sdk/packages.mjs");
  const { nodejs: folder } = await generateSdks(join(hooks.outDir, "plugin-sdk"), ["nodejs"]);
  if (!folder) throw new Error("npm run sdk's generator wrote no TypeScript SDK");
  hooks.say(`plugin bench: compiling the TypeScript SDK generated in ${folder}`);
  const sdk = createRequire(join(folder, "package.json"))(await compileNodejsSdk(folder)) as Omit<Kit, "priceId"> & {
    getPriceIdOutput(args: { plan: string }): pulumi.Output<{ priceId: string }>;
  };
  return { ...sdk, priceId: (plan) => sdk.getPriceIdOutput({ plan }).priceId };
}

/** Runs the phases of one side on a fresh stack, measuring each. */
async function runSide(
  hooks: PluginBenchHooks,
  side: PluginSideName,
  project: BenchProject,
  spec: FleetSpec,
  resources: number,
): Promise<PluginSide & { pulumiVersion: string }> {
  const stack = await createBenchStack(project, spec.tenants, hooks.stackSettings);
  const { results, state } = await runStackPhases(
    stack,
    project.name,
    resources,
    PLUGIN_PHASES,
    hooks.stackSettings,
    async (phase, action) => ({
      phase: phase as PluginPhase,
      ...(await hooks.sample(`${side} ${phase} (${spec.tenants} tenants)`, action)),
    }),
  );
  return { side, phases: results, state, pulumiVersion: stack.workspace.pulumiVersion };
}

/** Both sides for `tenants` tenants, the dynamic resources first. */
export async function pluginBench(
  hooks: PluginBenchHooks,
  plans: readonly Plan[],
  tenants: number,
): Promise<PluginBenchResult> {
  const spec = fleetSpec(plans, tenants, DOMAINS_AT_MOST);
  const domains = tenantsOf(spec).reduce((sum, tenant, index) => sum + domainsOf(tenant.domains, index).length, 0);
  const resources = spec.tenants * FIXED_RESOURCES + domains;
  hooks.say(`plugin bench: ${spec.tenants} tenants, ${domains} domains, ${resources} resources, plan ${spec.plan}`);
  const plugin = await sdkKit(hooks);
  const dynamic = await runSide(
    hooks,
    "dynamic",
    { name: PROJECT_NAME, program: tenantsProgram(spec, dynamicKit) },
    spec,
    resources,
  );
  const viaPlugin = await runSide(
    hooks,
    "plugin",
    {
      // The same project name, so that both sides' URNs, which the checkpoint repeats, are as long.
      name: PROJECT_NAME,
      folder: `${PROJECT_NAME}-plugin`,
      program: tenantsProgram(spec, plugin),
      pluginFolders: { dmarc: hooks.pluginFolder },
    },
    spec,
    resources,
  );
  const sides = [dynamic, viaPlugin].map(({ pulumiVersion: _version, ...side }) => side);
  return { spec, domains, resources, sides, pulumiVersion: dynamic.pulumiVersion };
}

export interface PluginBenchReport {
  kind: "plugin";
  startedAt: string;
  /** The bench's settings; `domainsPerTenant` is the most a tenant has (one and two in turn), `resources` the program's. */
  settings: Settings;
  machine: Machine;
  domains: number;
  sides: PluginSide[];
}

const SIDE_LABELS: Record<PluginSideName, string> = {
  dynamic: "dynamic resources",
  plugin: "plugin, generated SDK",
};

/** CPU seconds of a phase by process kind; the program's includes a language host process when the engine started one. */
function cpuOf(sample: PhaseSample) {
  const engine = sample.processes.engine.cpuSeconds;
  const program = sample.programCpuSeconds + sample.processes.language.cpuSeconds;
  const provider = sample.processes.provider.cpuSeconds;
  return { engine, program, provider, total: engine + program + provider };
}

type Figure = [label: string, value: (sample: PhaseSample) => number, digits: number];

function phaseFigures(resources: number): Figure[] {
  return [
    ["wall s", (sample) => sample.wallSeconds, 2],
    ["API requests", (sample) => sample.requests, 0],
    ["engine CPU s", (sample) => cpuOf(sample).engine, 2],
    ["program (and language host) CPU s", (sample) => cpuOf(sample).program, 2],
    ["provider process CPU s", (sample) => cpuOf(sample).provider, 2],
    ["CPU s, the three", (sample) => cpuOf(sample).total, 2],
    ["CPU ms per resource", (sample) => (1000 * cpuOf(sample).total) / resources, 1],
    ["children's CPU s, counted whole", (sample) => sample.endedChildrenCpuSeconds, 2],
    ["engine wrote MiB", (sample) => sample.processes.engine.bytesWritten / MiB, 0],
    ["engine peak MiB", (sample) => sample.processes.engine.peakMemoryMiB, 0],
    ["provider peak MiB", (sample) => sample.processes.provider.peakMemoryMiB, 0],
  ];
}

/** A figure of both sides and their quotient, taken of the figures as shown. */
function row(label: string, values: readonly (number | null)[], digits: number): string[] {
  const [dynamic = null, plugin = null] = values.map((value) => (value === null ? null : Number(fixed(value, digits))));
  const quotient = dynamic === null || plugin === null ? null : ratio(plugin, dynamic);
  return [label, ...values.map((value) => fixed(value, digits)), quotient === null ? "n/a" : `${quotient.toFixed(2)}×`];
}

function stateRows(sides: readonly PluginSide[]): string[][] {
  const figures: [string, (state: StateFootprint) => number][] = [
    ["checkpoint bytes", (state) => state.checkpointBytes],
    ["resources in the checkpoint", (state) => state.resourcesInCheckpoint],
    ["bytes per resource", (state) => state.bytesPerResource],
    ["of which `__provider`", (state) => state.providerBytesPerResource],
  ];
  return figures.map(([label, value]) =>
    row(
      `state: ${label}`,
      sides.map((side) => (side.state ? value(side.state) : null)),
      0,
    ),
  );
}

export function pluginBenchMarkdown(report: PluginBenchReport): string {
  const { settings, sides } = report;
  const rows: string[][] = [];
  for (const phase of PLUGIN_PHASES) {
    const samples = sides.map((side) => side.phases.find((candidate) => candidate.phase === phase) ?? null);
    for (const [label, value, digits] of phaseFigures(settings.resources)) {
      rows.push(
        row(
          `${phase}: ${label}`,
          samples.map((sample) => (sample ? value(sample) : null)),
          digits,
        ),
      );
    }
  }
  const allPhases = sides.map((side) => side.phases.reduce((sum, sample) => sum + cpuOf(sample).total, 0));
  rows.push(row("all three phases: CPU s", allPhases, 2));
  rows.push(
    row(
      "all three phases: CPU ms per resource",
      allPhases.map((cpu) => (1000 * cpu) / settings.resources),
      1,
    ),
  );
  rows.push(...stateRows(sides));
  const languageHosts = sides
    .flatMap((side) => side.phases)
    .reduce((n, sample) => n + sample.processes.language.processes, 0);
  const lines = [
    `### ${settings.tenants} tenants, ${report.domains} domains: ${settings.resources} resources (plan ${settings.plan}), dynamic resources against the plugin`,
    "",
    `${describeSettings(settings)}. ${describeMachine(report.machine)}.`,
    "",
    table(["phase: figure", ...sides.map((side) => SIDE_LABELS[side.side]), "plugin ÷ dynamic"], rows),
    "",
    `- program: the bench's own process, which hosts the inline program (and samples /proc) on both sides; language host processes the engine started: ${languageHosts}; provider process: the dynamic provider's node, or the plugin's`,
    "- children's CPU: every process the phase started and saw end, counted whole (the sampled figures can miss a process's last moments)",
  ];
  return `${lines.join("\n")}\n`;
}
