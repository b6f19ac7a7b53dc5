import { resolve } from "node:path";
import { type ConfigMap, LocalWorkspace } from "@pulumi/pulumi/automation";
import {
  type CommandSpec,
  checkOptionsApply,
  listOption,
  parseOptions,
  stringOption,
  UsageError,
  usageText,
  wholeNumber,
} from "../cli/options";
import { InventoryError, loadInventory } from "../inventory/inventory";
import { recoverShard } from "../recovery/shard";
import { DEFAULT_SHARD_SIZE } from "./assignment";
import { summaryTable } from "./progress";
import { FLEET_COMMANDS, type FleetCommand, type FleetOptions, type FleetReport, runFleet } from "./runner";

/** `dmarc-fleet`'s exit codes; every code a run can end with is here, and the usage text and docs are read off it. */
export const FLEET_EXIT = {
  ok: { code: 0, meaning: "done: every shard ran (or was skipped as unchanged)" },
  failed: { code: 1, meaning: "failed: a shard failed, or the run could not reach the backend or the service" },
  usage: { code: 2, meaning: "bad usage: an unknown option, or an inventory or configuration that does not check" },
} as const;

export const FLEET_SPEC: CommandSpec = {
  synopsis: `dmarc-fleet <${FLEET_COMMANDS.join("|")}> [options]`,
  summary: 'Runs a tenants inventory as many small stacks ("shards") side by side, under one request budget.',
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

export interface FleetInvocation {
  command: FleetCommand;
  json: boolean;
  options: FleetOptions;
}

/** The command line read into runner options; a {@link UsageError} or an {@link InventoryError} for bad input. */
export async function fleetOptionsFromArgs(argv: readonly string[]): Promise<FleetInvocation | "help"> {
  const { values, positionals } = parseOptions(FLEET_SPEC, argv);
  if (values.help) return "help";
  const command = positionals[0] as FleetCommand | undefined;
  if (!command || !FLEET_COMMANDS.includes(command))
    throw new UsageError(`the first argument must be one of ${FLEET_COMMANDS.join(", ")}, got "${command ?? ""}"`);
  if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"`);
  checkOptionsApply(FLEET_SPEC, command, values);
  const cwd = resolve(stringOption(values, "cwd") ?? ".");
  const backend = stringOption(values, "backend");
  const env: Record<string, string> = backend ? { PULUMI_BACKEND_URL: backend } : {};
  const inventory = loadInventory(resolve(cwd, stringOption(values, "inventory") ?? "tenants.yaml"));
  const shardSize = wholeNumber(values, "shard-size");
  const concurrency = wholeNumber(values, "concurrency");
  const only = listOption(values, "shard");
  const { project, stackName, config, secretsProvider } = await projectSettingsOf(
    cwd,
    stringOption(values, "config-stack"),
    env,
  );
  const backendUrl = backend ?? project.backend?.url;
  return {
    command,
    json: values.json === true,
    options: {
      fleet: stringOption(values, "fleet") ?? stackName ?? "fleet",
      projectName: project.name,
      projectDir: cwd,
      stateDir: resolve(cwd, ".dmarc-fleet"),
      recover: recoverShard,
      config,
      env,
      inventory,
      ...(backendUrl ? { backendUrl } : {}),
      ...(secretsProvider ? { secretsProvider } : {}),
      ...(shardSize ? { shardSize } : {}),
      ...(concurrency ? { concurrency } : {}),
      ...(only ? { only } : {}),
      ...(values.all ? { all: true } : {}),
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
    return `${shard.name}  ${String(shard.tenants.length).padStart(4)} tenants  ${state}${leaving}`;
  });
  return [
    `fleet ${report.fleet}: ${report.shards.length} shard(s) of at most ${report.shardSize} tenants`,
    ...lines,
  ].join("\n");
}

const isBadInput = (error: unknown) => error instanceof UsageError || error instanceof InventoryError;

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
