import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { type ConfigMap, LocalWorkspace } from "@pulumi/pulumi/automation";
import { loadInventory } from "../inventory/inventory";
import { DEFAULT_SHARD_SIZE } from "./assignment";
import { summaryTable } from "./progress";
import { recoverShard } from "./recovery";
import { FLEET_COMMANDS, type FleetCommand, type FleetOptions, type FleetReport, runFleet } from "./runner";

const USAGE = `Usage: dmarc-fleet <${FLEET_COMMANDS.join("|")}> [options]

Runs a tenants inventory as many small stacks ("shards") side by side.

  --inventory <file>      the tenants YAML file (default: tenants.yaml in --cwd)
  --cwd <dir>             the Pulumi project folder, with Pulumi.yaml and node_modules (default: .)
  --config-stack <name>   stack whose configuration and secrets provider every shard takes
                          (default: the project's selected stack)
  --fleet <name>          stem of the shard stacks' names (default: the config stack's name, else "fleet")
  --backend <url>         Pulumi backend (default: the one you are logged in to)
  --shard-size <n>        tenants per new shard (default: ${DEFAULT_SHARD_SIZE})
  --concurrency <n>       shards run at once (default: the machine's cores)
  --shard <name>          only this shard; repeat for several (e.g. one CI job each)
  --all                   up: run every shard, not only changed or failed ones
  --json                  print the report as JSON on stdout

Exit codes: 0 done, 1 a shard failed, 2 bad usage, configuration or inventory.`;

export class UsageError extends Error {
  override name = "UsageError";
}

function positiveInteger(flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1)
    throw new UsageError(`--${flag} must be a whole number of at least 1, got "${raw}"`);
  return value;
}

/** The project's name, backend, and the config stack's configuration and secrets provider, read through the CLI. */
async function projectSettingsOf(cwd: string, configStack: string | undefined, env: Record<string, string>) {
  const workspace = await LocalWorkspace.create({ workDir: cwd, envVars: env });
  const project = await workspace.projectSettings();
  const stackName = configStack ?? (await workspace.stack())?.name;
  const config: ConfigMap = stackName ? await workspace.getAllConfig(stackName) : {};
  const secretsProvider = stackName ? (await workspace.stackSettings(stackName)).secretsProvider : undefined;
  return { project, stackName, config, secretsProvider };
}

export async function fleetOptionsFromArgs(
  argv: readonly string[],
): Promise<{ command: FleetCommand; json: boolean; options: FleetOptions }> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      inventory: { type: "string" },
      cwd: { type: "string" },
      "config-stack": { type: "string" },
      fleet: { type: "string" },
      backend: { type: "string" },
      "shard-size": { type: "string" },
      concurrency: { type: "string" },
      shard: { type: "string", multiple: true },
      all: { type: "boolean" },
      json: { type: "boolean" },
      help: { type: "boolean" },
    },
  });
  const command = positionals[0] as FleetCommand | undefined;
  if (values.help || !command || !FLEET_COMMANDS.includes(command) || positionals.length > 1)
    throw new UsageError(USAGE);
  const cwd = resolve(values.cwd ?? ".");
  const env: Record<string, string> = values.backend ? { PULUMI_BACKEND_URL: values.backend } : {};
  const inventory = loadInventory(resolve(cwd, values.inventory ?? "tenants.yaml"));
  const { project, stackName, config, secretsProvider } = await projectSettingsOf(cwd, values["config-stack"], env);
  const backendUrl = values.backend ?? project.backend?.url;
  const shardSize = positiveInteger("shard-size", values["shard-size"]);
  const concurrency = positiveInteger("concurrency", values.concurrency);
  return {
    command,
    json: values.json === true,
    options: {
      fleet: values.fleet ?? stackName ?? "fleet",
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
      ...(values.shard ? { only: values.shard } : {}),
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

/** The command: exit code 0 when every shard is done, 1 when one failed, 2 for bad usage or input. */
export async function main(argv: readonly string[] = process.argv.slice(2)): Promise<number> {
  let parsed: Awaited<ReturnType<typeof fleetOptionsFromArgs>>;
  try {
    parsed = await fleetOptionsFromArgs(argv);
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
  const { command, json, options } = parsed;
  let report: FleetReport;
  try {
    report = await runFleet(command, options);
  } catch (error) {
    process.stderr.write(`dmarc-fleet ${command}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
  if (json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else if (command === "shards" || command === "status") process.stdout.write(`${overviewTable(report)}\n`);
  else process.stdout.write(`${summaryTable(report.results)}\n`);
  return report.ok ? 0 : 1;
}
