import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { type ConfigMap, LocalWorkspace } from "@pulumi/pulumi/automation";
import {
  type CommandSpec,
  checkOptionsApply,
  type ExitCode,
  listOption,
  type OptionValues,
  parseOptions,
  stringOption,
  UsageError,
  usageText,
  wholeNumber,
} from "../cli/options";
import { DEFAULT_IMPORT_ON_DELETE } from "../discovery/importer";
import { type ImportReport, importSummary } from "../discovery/report";
import { InventoryError, loadInventory } from "../inventory/inventory";
import { recoverShard } from "../recovery/shard";
import { TenantOnDelete } from "../tenant/schema";
import { DEFAULT_SHARD_SIZE } from "./assignment";
import { COMMENT_LIMIT, findingsMarkdown } from "./findingsMarkdown";
import { findingsText } from "./findingsText";
import { type ImportCommandOptions, ImportRefused, runImport } from "./import";
import { DEFAULT_MAX_OFFBOARD } from "./offboardingGate";
import { summaryTable } from "./progress";
import { FLEET_COMMANDS, type FleetCommand, type FleetOptions, type FleetReport, runFleet } from "./runner";

/**
 * `dmarc-fleet`'s exit codes; every code a run can end with is here, and the
 * usage text and docs are read off it. A failure outranks every finding, so
 * a pipeline never mistakes a broken run for a plan, drift or a refusal.
 */
export const FLEET_EXIT = {
  ok: { code: 0, meaning: "done: every shard ran (or was skipped as unchanged), and none of the findings below" },
  failed: {
    code: 1,
    meaning: "failed: a shard or an import --check failed, or the backend or the service could not be reached",
  },
  usage: { code: 2, meaning: "bad usage: an unknown option, or an inventory or configuration that does not check" },
  changes: {
    code: 3,
    meaning: "changes pending (preview --detailed-exitcode): the plan creates, updates, replaces or deletes something",
  },
  drift: {
    code: 4,
    meaning:
      "drift found (drift): an object differs from its shard's state or is missing on the service; with --fail-on-unmanaged also an organisation no shard manages",
  },
  refused: {
    code: 5,
    meaning:
      "refused (preview, up): an offboarding was not approved or over --max-offboard; the tenant was left as it is, the rest ran",
  },
} as const;

/** The command that writes the inventory instead of running it. */
const IMPORT_COMMAND = "import";

const ON_DELETE_VALUES = TenantOnDelete.options;

export const FLEET_SPEC: CommandSpec = {
  synopsis: `dmarc-fleet <${[...FLEET_COMMANDS, IMPORT_COMMAND].join("|")}> [options]`,
  summary:
    'Runs a tenants inventory as many small stacks ("shards") side by side, under one request budget; import writes the partner\'s existing organisations into the inventory.',
  options: [
    {
      name: "inventory",
      type: "string",
      value: "<file>",
      description: "the tenants YAML file (default: tenants.yaml in --cwd)",
    },
    {
      name: "cwd",
      type: "string",
      value: "<dir>",
      description: "the Pulumi project folder, with Pulumi.yaml and node_modules (default: .)",
    },
    {
      name: "config-stack",
      type: "string",
      value: "<name>",
      description:
        "stack whose configuration and secrets provider every shard takes (default: the project's selected stack)",
    },
    {
      name: "fleet",
      type: "string",
      value: "<name>",
      description: "stem of the shard stacks' names (default: the config stack's name, else \"fleet\")",
    },
    {
      name: "backend",
      type: "string",
      value: "<url>",
      description: "Pulumi backend (default: the one you are logged in to)",
    },
    {
      name: "shard-size",
      type: "string",
      value: "<n>",
      description: `tenants per new shard (default: ${DEFAULT_SHARD_SIZE})`,
    },
    {
      name: "concurrency",
      type: "string",
      value: "<n>",
      description: "shards run at once (default: the machine's cores)",
    },
    {
      name: "shard",
      type: "string",
      value: "<name>",
      multiple: true,
      description: "only this shard; repeat for several (e.g. one CI job each)",
    },
    {
      name: "all",
      type: "boolean",
      description: "run every shard, not only changed or failed ones",
      commands: ["up"],
    },
    {
      name: "refresh",
      type: "boolean",
      description:
        "refresh every existing shard first, so objects changed or deleted outside the fleet are set back (shards where drift or refresh found drift are refreshed anyway)",
      commands: ["preview", "up"],
    },
    {
      name: "allow-offboard",
      type: "string",
      value: "<key>",
      multiple: true,
      description:
        "approve offboarding this deployed tenant the inventory no longer lists, in this run only; repeat for several (the inventory's offboard: section approves for every run)",
      commands: ["preview", "up"],
    },
    {
      name: "max-offboard",
      type: "string",
      value: "<n>",
      description: `most offboardings one run carries out; with more approved, all are refused (default: ${DEFAULT_MAX_OFFBOARD})`,
      commands: ["preview", "up"],
    },
    {
      name: "detailed-exitcode",
      type: "boolean",
      description: `exit ${FLEET_EXIT.changes.code} when the plan has changes`,
      commands: ["preview"],
    },
    {
      name: "fail-on-unmanaged",
      type: "boolean",
      description: `exit ${FLEET_EXIT.drift.code} also for organisations no shard manages (default: listed only, as onDelete: keep leaves them on purpose)`,
      commands: ["drift"],
    },
    {
      name: "markdown",
      type: "string",
      value: "<file>",
      description: `also write the findings per tenant as a pull-request comment to <file> (relative to --cwd), under ${COMMENT_LIMIT.toLocaleString("en")} characters`,
      commands: ["preview", "up", "drift"],
    },
    {
      name: "append",
      type: "boolean",
      description:
        "add only organisations that neither the inventory nor a shard holds (default: write a new inventory, which must not exist)",
      commands: [IMPORT_COMMAND],
    },
    {
      name: "only",
      type: "string",
      value: "<organization id>",
      multiple: true,
      description: "only this organisation; repeat for several",
      commands: [IMPORT_COMMAND],
    },
    {
      name: "check",
      type: "boolean",
      description:
        "read each object back as up's adoption would and leave out organisations that would not adopt cleanly",
      commands: [IMPORT_COMMAND],
    },
    {
      name: "on-delete",
      type: "string",
      value: `<${ON_DELETE_VALUES.join("|")}>`,
      description: `each imported tenant's onDelete (default: ${DEFAULT_IMPORT_ON_DELETE}: removing it from the file leaves the service alone)`,
      commands: [IMPORT_COMMAND],
    },
    { name: "json", type: "boolean", description: "print the report as JSON on stdout" },
    { name: "help", type: "boolean", short: "h", description: "print this text" },
  ],
  exitCodes: Object.values(FLEET_EXIT),
};

/** The project's name, backend, and the config stack's configuration and secrets provider, read through the CLI. */
async function projectSettingsOf(cwd: string, configStack: string | undefined, env: Record<string, string>) {
  const workspace = await LocalWorkspace.create({ workDir: cwd, envVars: env });
  const project = await workspace.projectSettings();
  const stackName = configStack ?? (await workspace.stack())?.name;
  const config: ConfigMap = stackName ? await workspace.getAllConfig(stackName) : {};
  const secretsProvider = stackName ? (await workspace.stackSettings(stackName)).secretsProvider : undefined;
  return { project, stackName, config, secretsProvider };
}

/** A run of the fleet, as the command line asked for it. */
export interface FleetInvocation {
  command: FleetCommand;
  json: boolean;
  /** Where the pull-request comment goes, absolute. */
  markdown?: string;
  detailedExitcode: boolean;
  failOnUnmanaged: boolean;
  options: FleetOptions;
}

/** An import, as the command line asked for it. */
export interface ImportInvocation {
  command: typeof IMPORT_COMMAND;
  json: boolean;
  options: ImportCommandOptions;
}

function onDeleteOption(values: OptionValues): TenantOnDelete | undefined {
  const value = stringOption(values, "on-delete");
  if (value === undefined) return undefined;
  const parsed = TenantOnDelete.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new UsageError(`--on-delete must be one of ${ON_DELETE_VALUES.join(", ")}, got "${value}"`);
}

/** The command line read into runner (or import) options; a {@link UsageError} or an {@link InventoryError} for bad input. */
export async function fleetOptionsFromArgs(
  argv: readonly string[],
): Promise<FleetInvocation | ImportInvocation | "help"> {
  const { values, positionals } = parseOptions(FLEET_SPEC, argv);
  if (values.help) return "help";
  const command = positionals[0];
  const commands: readonly string[] = [...FLEET_COMMANDS, IMPORT_COMMAND];
  if (!command || !commands.includes(command))
    throw new UsageError(`the first argument must be one of ${commands.join(", ")}, got "${command ?? ""}"`);
  if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"`);
  checkOptionsApply(FLEET_SPEC, command, values);
  const cwd = resolve(stringOption(values, "cwd") ?? ".");
  const backend = stringOption(values, "backend");
  const env: Record<string, string> = backend ? { PULUMI_BACKEND_URL: backend } : {};
  const inventoryPath = resolve(cwd, stringOption(values, "inventory") ?? "tenants.yaml");
  const inventory = command === IMPORT_COMMAND ? undefined : loadInventory(inventoryPath);
  const onDelete = onDeleteOption(values);
  const shardSize = wholeNumber(values, "shard-size");
  const concurrency = wholeNumber(values, "concurrency");
  const shards = listOption(values, "shard");
  const organizations = listOption(values, "only");
  const allowOffboard = listOption(values, "allow-offboard");
  const maxOffboard = wholeNumber(values, "max-offboard", 0);
  const markdown = stringOption(values, "markdown");
  const { project, stackName, config, secretsProvider } = await projectSettingsOf(
    cwd,
    stringOption(values, "config-stack"),
    env,
  );
  const backendUrl = backend ?? project.backend?.url;
  const common = {
    fleet: stringOption(values, "fleet") ?? stackName ?? "fleet",
    projectName: project.name,
    projectDir: cwd,
    stateDir: resolve(cwd, ".dmarc-fleet"),
    recover: recoverShard,
    config,
    env,
    ...(backendUrl ? { backendUrl } : {}),
    ...(secretsProvider ? { secretsProvider } : {}),
    ...(shardSize ? { shardSize } : {}),
    ...(concurrency ? { concurrency } : {}),
    ...(shards ? { only: shards } : {}),
  };
  const json = values.json === true;
  if (inventory === undefined) {
    return {
      command: IMPORT_COMMAND,
      json,
      options: {
        ...common,
        inventoryPath,
        ...(values.append ? { append: true } : {}),
        ...(values.check ? { check: true } : {}),
        ...(organizations ? { only: organizations } : {}),
        ...(onDelete ? { onDelete } : {}),
      },
    };
  }
  return {
    command: command as FleetCommand,
    json,
    ...(markdown ? { markdown: resolve(cwd, markdown) } : {}),
    detailedExitcode: values["detailed-exitcode"] === true,
    failOnUnmanaged: values["fail-on-unmanaged"] === true,
    options: {
      ...common,
      inventory,
      ...(values.all ? { all: true } : {}),
      ...(values.refresh ? { refresh: true } : {}),
      ...(allowOffboard ? { allowOffboard } : {}),
      ...(maxOffboard === undefined ? {} : { maxOffboard }),
    },
  };
}

function overviewTable(report: FleetReport): string {
  const lines = report.shards.map((shard) => {
    const state = shard.interrupted
      ? `interrupted (${shard.interrupted})`
      : !shard.exists
        ? "new"
        : shard.upToDate
          ? "up to date"
          : "changed";
    const leaving = shard.leaving.length > 0 ? `, leaving: ${shard.leaving.join(" ")}` : "";
    const drift = shard.drift ? `, drift ${shard.drift}` : "";
    return `${shard.name}  ${String(shard.tenants.length).padStart(4)} tenants  ${state}${leaving}${drift}`;
  });
  return [
    `fleet ${report.fleet}: ${report.shards.length} shard(s) of at most ${report.shardSize} tenants`,
    ...lines,
  ].join("\n");
}

const isBadInput = (error: unknown) =>
  error instanceof UsageError || error instanceof InventoryError || error instanceof ImportRefused;

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** What the findings are called under each command that reports them. */
const FINDINGS_HEADINGS: Partial<Record<FleetCommand, string>> = {
  preview: "Plan per tenant",
  up: "Done per tenant",
  refresh: "Drift taken into the state, per tenant",
  drift: "Drift per tenant",
  destroy: "Destroyed per tenant",
};

/** The findings that end a run with their own code, the most pressing first; a failed shard outranks them all. */
const FINDING_EXITS: readonly {
  exit: ExitCode;
  found: (report: FleetReport, invocation: FleetInvocation) => boolean;
}[] = [
  { exit: FLEET_EXIT.refused, found: (report) => report.totals.tenants.refused > 0 },
  {
    exit: FLEET_EXIT.drift,
    found: (report, invocation) =>
      report.command === "drift" &&
      (report.totals.objects.differs + report.totals.objects.missing > 0 ||
        (invocation.failOnUnmanaged && (report.unmanaged?.organizations.length ?? 0) > 0)),
  },
  {
    exit: FLEET_EXIT.changes,
    found: (report, invocation) => {
      const { create, update, replace, delete: deleted } = report.totals.objects;
      return invocation.detailedExitcode && create + update + replace + deleted > 0;
    },
  },
];

export function exitCodeOf(report: FleetReport, invocation: FleetInvocation): number {
  if (!report.ok) return FLEET_EXIT.failed.code;
  return (FINDING_EXITS.find((entry) => entry.found(report, invocation))?.exit ?? FLEET_EXIT.ok).code;
}

/** Writes the pull-request comment; when it had to leave tenants out, the complete one goes next to it. */
function writeComment(report: FleetReport, file: string): void {
  const fullReport = file.replace(/(\.md)?$/, ".full.md");
  const subject = { command: report.command, fleet: report.fleet, results: report.results, findings: report };
  const comment = findingsMarkdown(subject, { fullReport });
  const complete = findingsMarkdown(subject, { fullReport, limit: Number.POSITIVE_INFINITY });
  writeFileSync(file, `${comment}\n`);
  if (comment !== complete) writeFileSync(fullReport, `${complete}\n`);
}

function printReport(report: FleetReport, json: boolean): void {
  const { command } = report;
  if (json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else if (command === "shards" || command === "status") process.stdout.write(`${overviewTable(report)}\n`);
  else {
    const heading = FINDINGS_HEADINGS[command];
    const findings = heading ? `\n\n${findingsText(report, heading)}` : "";
    process.stdout.write(`${summaryTable(report.results)}${findings}\n`);
  }
}

/** The command; answers one of {@link FLEET_EXIT}'s codes. */
export async function main(argv: readonly string[] = process.argv.slice(2)): Promise<number> {
  let parsed: FleetInvocation | ImportInvocation | "help";
  try {
    parsed = await fleetOptionsFromArgs(argv);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\n\n${usageText(FLEET_SPEC)}\n`);
      return FLEET_EXIT.usage.code;
    }
    process.stderr.write(`${message(error)}\n`);
    return isBadInput(error) ? FLEET_EXIT.usage.code : FLEET_EXIT.failed.code;
  }
  if (parsed === "help") {
    process.stdout.write(`${usageText(FLEET_SPEC)}\n`);
    return FLEET_EXIT.ok.code;
  }
  if (parsed.command === IMPORT_COMMAND) return importMain(parsed.options, parsed.json);
  const { command, options } = parsed;
  let report: FleetReport;
  try {
    report = await runFleet(command, options);
  } catch (error) {
    process.stderr.write(`dmarc-fleet ${command}: ${message(error)}\n`);
    return isBadInput(error) ? FLEET_EXIT.usage.code : FLEET_EXIT.failed.code;
  }
  printReport(report, parsed.json);
  if (parsed.markdown) writeComment(report, parsed.markdown);
  return exitCodeOf(report, parsed);
}

async function importMain(options: ImportCommandOptions, json: boolean): Promise<number> {
  let report: ImportReport;
  try {
    report = await runImport(options);
  } catch (error) {
    process.stderr.write(`dmarc-fleet ${IMPORT_COMMAND}: ${message(error)}\n`);
    return isBadInput(error) ? FLEET_EXIT.usage.code : FLEET_EXIT.failed.code;
  }
  process.stdout.write(`${json ? JSON.stringify(report, null, 2) : importSummary(report)}\n`);
  return report.failedChecks > 0 ? FLEET_EXIT.failed.code : FLEET_EXIT.ok.code;
}
