import { resolve } from "node:path";
import { type ConfigMap, LocalWorkspace } from "@pulumi/pulumi/automation";
import {
  type CommandSpec,
  checkOptionsApply,
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
import { type ImportCommandOptions, ImportRefused, runImport } from "./import";
import { summaryTable } from "./progress";
import { FLEET_COMMANDS, type FleetCommand, type FleetOptions, type FleetReport, runFleet } from "./runner";

/** `dmarc-fleet`'s exit codes; every code a run can end with is here, and the usage text and docs are read off it. */
export const FLEET_EXIT = {
  ok: { code: 0, meaning: "done: every shard ran (or was skipped as unchanged)" },
  failed: {
    code: 1,
    meaning: "failed: a shard or an import --check failed, or the backend or the service could not be reached",
  },
  usage: { code: 2, meaning: "bad usage: an unknown option, or an inventory or configuration that does not check" },
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

export type FleetInvocation =
  | { command: FleetCommand; json: boolean; options: FleetOptions }
  | { command: typeof IMPORT_COMMAND; json: boolean; options: ImportCommandOptions };

function onDeleteOption(values: OptionValues): TenantOnDelete | undefined {
  const value = stringOption(values, "on-delete");
  if (value === undefined) return undefined;
  const parsed = TenantOnDelete.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new UsageError(`--on-delete must be one of ${ON_DELETE_VALUES.join(", ")}, got "${value}"`);
}

/** The command line read into runner (or import) options; a {@link UsageError} or an {@link InventoryError} for bad input. */
export async function fleetOptionsFromArgs(argv: readonly string[]): Promise<FleetInvocation | "help"> {
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
    options: { ...common, inventory, ...(values.all ? { all: true } : {}) },
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
    return `${shard.name}  ${String(shard.tenants.length).padStart(4)} tenants  ${state}${leaving}`;
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

/** The command; answers one of {@link FLEET_EXIT}'s codes. */
export async function main(argv: readonly string[] = process.argv.slice(2)): Promise<number> {
  let parsed: FleetInvocation | "help";
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
  const { command, json, options } = parsed;
  let report: FleetReport;
  try {
    report = await runFleet(command, options);
  } catch (error) {
    process.stderr.write(`dmarc-fleet ${command}: ${message(error)}\n`);
    return isBadInput(error) ? FLEET_EXIT.usage.code : FLEET_EXIT.failed.code;
  }
  if (json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else if (command === "shards" || command === "status") process.stdout.write(`${overviewTable(report)}\n`);
  else process.stdout.write(`${summaryTable(report.results)}\n`);
  return report.ok ? FLEET_EXIT.ok.code : FLEET_EXIT.failed.code;
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
