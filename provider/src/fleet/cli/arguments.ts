import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { type ConfigMap, LocalWorkspace } from "@pulumi/pulumi/automation";
import { parse } from "yaml";
import { urnStack } from "../../checkpoint/deployment";
import { stateBackendEnv } from "../../checkpoint/postgresBackend";
import { repairCutShortAttributes } from "../../checkpoint/repair";
import {
  checkOptionsApply,
  listOption,
  type OptionValues,
  parseOptions,
  stringOption,
  UsageError,
  wholeNumber,
} from "../../cli/options";
import { shellWord, shownPath } from "../../cli/shown";
import { type Inventory, loadInventory } from "../../inventory/inventory";
import type { PersonsDecisions } from "../../recovery/plan";
import { shardRecovery } from "../../recovery/shard";
import { readTextIfAny } from "../../runtime/readText";
import { TenantOnDelete } from "../../tenant/schema";
import type { EnforceOptions } from "../enforce/enforce";
import type { StackEnforceOptions } from "../enforce/stack";
import { FLEET_COMMANDS, type FleetCommand, type FleetOptions, settingsOf } from "../fleetOptions";
import { shardNumber } from "../plan/assignment";
import { backendFolderOf } from "../plan/scan";
import { ENFORCE_COMMAND, FLEET_SPEC, IMPORT_COMMAND, ON_DELETE_VALUES, REPORT_COMMAND } from "./commandSpec";
import type { ImportCommandOptions } from "./import";

// `dmarc-fleet`'s command line read into what a command runs with: the
// runner's options for a fleet command, the import's for `import`.

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

/** A policy ramp's run, as the command line asked for it. */
export interface EnforceInvocation {
  command: typeof ENFORCE_COMMAND;
  json: boolean;
  /** Where the pull request's body goes, absolute. */
  markdown?: string;
  detailedExitcode: boolean;
  /** The inventory's ramp, or a program's (`--stack`): its stack's configuration file. */
  options: EnforceOptions | StackEnforceOptions;
}

/** The fleet's page, as the command line asked for it. */
export interface ReportInvocation {
  command: typeof REPORT_COMMAND;
  json: boolean;
  /** Where the page goes, absolute. */
  html?: string;
  until?: string;
  options: FleetOptions;
}

/** The commands that run no shard. */
type OtherCommand = typeof IMPORT_COMMAND | typeof ENFORCE_COMMAND | typeof REPORT_COMMAND;
const OTHER_COMMANDS: readonly string[] = [IMPORT_COMMAND, ENFORCE_COMMAND, REPORT_COMMAND];
const COMMANDS: readonly string[] = [...FLEET_COMMANDS, ...OTHER_COMMANDS];

function isFleetCommand(name: string): name is FleetCommand {
  return (FLEET_COMMANDS as readonly string[]).includes(name);
}

/** The one command the first argument names. */
function commandOf(positionals: readonly string[]): FleetCommand | OtherCommand {
  const command = positionals[0] ?? "";
  if (!OTHER_COMMANDS.includes(command) && !isFleetCommand(command))
    throw new UsageError(`the first argument must be one of ${COMMANDS.join(", ")}, got "${command}"`);
  if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"`);
  return command as FleetCommand | OtherCommand;
}

/**
 * The project's selected stack. Finding it lists the stacks, which loads
 * every checkpoint of the project, the fleet's shards included: a run
 * killed while one was written leaves its attributes file cut short, and
 * the listing fails on it before the scan could recover that shard. That
 * repair loses nothing, so it is made here, said, and the listing asked again.
 */
async function selectedStack(workspace: LocalWorkspace, projectName: string, backendUrl: string | undefined) {
  try {
    return (await workspace.stack())?.name;
  } catch (error) {
    const folder = await backendFolderOf(workspace, backendUrl);
    const repaired = folder === undefined ? [] : repairCutShortAttributes(folder, projectName);
    if (repaired.length === 0) throw error;
    for (const file of repaired) {
      process.stderr.write(
        `${shownPath(file)}: a killed run cut its attributes file short; removed it, the checkpoint is whole\n`,
      );
    }
    return (await workspace.stack())?.name;
  }
}

/**
 * The project's name, backend, and the config stack's configuration and
 * secrets provider, read through the CLI; `env` gains what the backend
 * needs for every later call (checkpoint/postgresBackend.ts).
 */
async function projectSettingsOf(cwd: string, configStack: string | undefined, env: Record<string, string>) {
  const workspace = await LocalWorkspace.create({ workDir: cwd, envVars: env });
  const project = await workspace.projectSettings();
  Object.assign(env, stateBackendEnv(env.PULUMI_BACKEND_URL ?? process.env.PULUMI_BACKEND_URL ?? project.backend?.url));
  Object.assign(workspace.envVars, env);
  const stackName =
    configStack ?? (await selectedStack(workspace, project.name, env.PULUMI_BACKEND_URL ?? project.backend?.url));
  const config: ConfigMap = stackName ? await workspace.getAllConfig(stackName) : {};
  const secretsProvider = stackName ? (await workspace.stackSettings(stackName)).secretsProvider : undefined;
  return { project, stackName, config, secretsProvider };
}

/**
 * `--adopt` and `--drop`: each URN must name a shard of this fleet (the
 * URN's stack), whose recovery alone takes it; the recovery checks it
 * against that shard's pending creates.
 */
function personsDecisions(values: OptionValues, fleet: string, projectName: string): PersonsDecisions | undefined {
  const adopt = listOption(values, "adopt") ?? [];
  const drop = listOption(values, "drop") ?? [];
  for (const [option, argument] of [...adopt.map((a) => ["adopt", a]), ...drop.map((d) => ["drop", d])]) {
    const named = urnStack(argument ?? "");
    if (named?.project !== projectName || shardNumber(fleet, named.stack) === undefined)
      throw new UsageError(
        `--${option} ${argument}: takes the URN of a pending create in a shard of fleet ${fleet} (urn:pulumi:${fleet}-NNN::${projectName}::...), as the shard's recovery report lists it`,
      );
  }
  return adopt.length + drop.length > 0 ? { adopt, drop } : undefined;
}

/** How the shards a killed run left are recovered; `rerun` is the command line a report's `--adopt` and `--drop` go after. */
function recoveryOf(values: OptionValues, fleet: string, projectName: string, rerun: string | undefined) {
  const decisions = personsDecisions(values, fleet, projectName);
  return shardRecovery({
    unlockOtherHosts: values["unlock-other-hosts"] === true,
    ...(decisions ? { decisions } : {}),
    ...(rerun ? { rerun } : {}),
  });
}

/** What every command takes from the project: its name and backend, the config stack's settings, the fleet's name. */
async function projectOptions(values: OptionValues, cwd: string, rerun?: string) {
  const backend = stringOption(values, "backend");
  const env: Record<string, string> = backend ? { PULUMI_BACKEND_URL: backend } : {};
  const configStack = stringOption(values, "config-stack");
  const { project, stackName, config, secretsProvider } = await projectSettingsOf(cwd, configStack, env);
  const backendUrl = backend ?? project.backend?.url;
  const fleet = stringOption(values, "fleet") ?? stackName ?? "fleet";
  return {
    fleet,
    projectName: project.name,
    projectDir: cwd,
    stateDir: resolve(cwd, ".dmarc-fleet"),
    recover: recoveryOf(values, fleet, project.name, rerun),
    config,
    env,
    ...(backendUrl ? { backendUrl } : {}),
    ...(secretsProvider ? { secretsProvider } : {}),
  };
}

/** The shard options every command takes, read before the project is. */
function shardOptions(values: OptionValues) {
  const shardSize = wholeNumber(values, "shard-size");
  const concurrency = wholeNumber(values, "concurrency");
  return { ...(shardSize ? { shardSize } : {}), ...(concurrency ? { concurrency } : {}) };
}

function onDeleteOption(values: OptionValues): TenantOnDelete | undefined {
  const value = stringOption(values, "on-delete");
  if (value === undefined) return undefined;
  const parsed = TenantOnDelete.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new UsageError(`--on-delete must be one of ${ON_DELETE_VALUES.join(", ")}, got "${value}"`);
}

async function importInvocation(values: OptionValues, cwd: string, inventoryPath: string): Promise<ImportInvocation> {
  const onDelete = onDeleteOption(values);
  const shards = shardOptions(values);
  const organizations = listOption(values, "only");
  return {
    command: IMPORT_COMMAND,
    json: values.json === true,
    options: {
      ...(await projectOptions(values, cwd)),
      ...shards,
      inventoryPath,
      ...(values.append ? { append: true } : {}),
      ...(values.check ? { check: true } : {}),
      ...(organizations ? { organizations } : {}),
      ...(onDelete ? { onDelete } : {}),
    },
  };
}

/** `--today`: a real day, so the days held and the evidence window are counted from it. */
function dayOption(values: OptionValues, name: string): string | undefined {
  const value = stringOption(values, name);
  if (value === undefined) return undefined;
  const parsed = Date.parse(value);
  // Date.parse rolls 2026-02-30 over to March: a day is real when it reads back the same.
  if (
    !/^\d{4}-\d{2}-\d{2}$/.test(value) ||
    Number.isNaN(parsed) ||
    new Date(parsed).toISOString().slice(0, 10) !== value
  )
    throw new UsageError(`--${name} must be a day as YYYY-MM-DD, such as 2026-11-30, got "${value}"`);
  return value;
}

/**
 * The folder of the project's stack configuration files: Pulumi.yaml's
 * `stackConfigDir`, else the project's own. The Automation API's project
 * settings leave that key out, so Pulumi.yaml is read here.
 */
function stackConfigFolder(cwd: string): string {
  const text = readTextIfAny(join(cwd, "Pulumi.yaml")) ?? readTextIfAny(join(cwd, "Pulumi.yml"));
  const project = text === undefined ? undefined : (parse(text) as { stackConfigDir?: unknown } | null);
  const folder = project?.stackConfigDir;
  return typeof folder === "string" ? resolve(cwd, folder) : cwd;
}

/**
 * `--stack`: a program's ramp, kept in that stack's configuration file
 * (beside Pulumi.yaml, or in its `stackConfigDir`), whose settings read the
 * evidence too; not the inventory's.
 */
async function stackEnforceOptions(values: OptionValues, cwd: string, stackName: string) {
  for (const other of ["inventory", "config-stack"])
    if (values[other] !== undefined)
      throw new UsageError(`--stack enforces a program's stack, its configuration included: leave out --${other}`);
  const configPath = join(stackConfigFolder(cwd), `Pulumi.${stackName.split("/").at(-1)}.yaml`);
  if (!existsSync(configPath))
    throw new UsageError(`--stack ${stackName}: no stack configuration file ${shownPath(configPath)}`);
  const { config, projectName } = await projectOptions({ ...values, "config-stack": stackName }, cwd);
  return { configPath, projectName, stackName, settings: settingsOf({ config }) };
}

async function enforceInvocation(values: OptionValues, cwd: string, inventoryPath: string): Promise<EnforceInvocation> {
  const markdown = stringOption(values, "markdown");
  const today = dayOption(values, "today");
  const stackName = stringOption(values, "stack");
  const file =
    stackName === undefined
      ? { inventoryPath, settings: settingsOf({ config: (await projectOptions(values, cwd)).config }) }
      : await stackEnforceOptions(values, cwd, stackName);
  return {
    command: ENFORCE_COMMAND,
    json: values.json === true,
    ...(markdown ? { markdown: resolve(cwd, markdown) } : {}),
    detailedExitcode: values["detailed-exitcode"] === true,
    options: { ...file, ...(today ? { today } : {}), ...(values.write ? { write: true } : {}) },
  };
}

async function fleetInvocation(
  command: FleetCommand,
  values: OptionValues,
  cwd: string,
  inventory: Inventory,
  rerun: string,
): Promise<FleetInvocation> {
  const shards = shardOptions(values);
  const only = listOption(values, "shard");
  const allowOffboard = listOption(values, "allow-offboard");
  const maxOffboard = wholeNumber(values, "max-offboard", 0);
  const markdown = stringOption(values, "markdown");
  const auditLogMarginSeconds = wholeNumber(values, "audit-log-margin", 0);
  return {
    command,
    json: values.json === true,
    ...(markdown ? { markdown: resolve(cwd, markdown) } : {}),
    detailedExitcode: values["detailed-exitcode"] === true,
    failOnUnmanaged: values["fail-on-unmanaged"] === true,
    options: {
      ...(await projectOptions(values, cwd, rerun)),
      ...shards,
      ...(only ? { only } : {}),
      inventory,
      ...(values.all ? { all: true } : {}),
      ...(values.refresh ? { refresh: true } : {}),
      ...(values["audit-log"] ? { auditLog: true } : {}),
      ...(auditLogMarginSeconds === undefined ? {} : { auditLogMarginSeconds }),
      ...(allowOffboard ? { allowOffboard } : {}),
      ...(maxOffboard === undefined ? {} : { maxOffboard }),
    },
  };
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

async function reportInvocation(values: OptionValues, cwd: string, inventory: Inventory): Promise<ReportInvocation> {
  const html = stringOption(values, "html");
  const until = stringOption(values, "until");
  if (until !== undefined && (!DAY.test(until) || Number.isNaN(Date.parse(until))))
    throw new UsageError(`--until must be a day such as 2026-11-24 (YYYY-MM-DD), got "${until}"`);
  return {
    command: REPORT_COMMAND,
    json: values.json === true,
    ...(html ? { html: resolve(cwd, html) } : {}),
    ...(until ? { until } : {}),
    options: { ...(await projectOptions(values, cwd)), ...shardOptions(values), inventory },
  };
}

/** The command line read into runner (or import, or report) options; a {@link UsageError} or an {@link InventoryError} for bad input. */
export async function fleetOptionsFromArgs(
  argv: readonly string[],
): Promise<FleetInvocation | ImportInvocation | EnforceInvocation | ReportInvocation | "help"> {
  const { values, positionals } = parseOptions(FLEET_SPEC, argv);
  if (values.help) return "help";
  const command = commandOf(positionals);
  checkOptionsApply(FLEET_SPEC, command, values);
  const cwd = resolve(stringOption(values, "cwd") ?? ".");
  const inventoryPath = resolve(cwd, stringOption(values, "inventory") ?? "tenants.yaml");
  if (command === IMPORT_COMMAND) return importInvocation(values, cwd, inventoryPath);
  if (command === ENFORCE_COMMAND) return enforceInvocation(values, cwd, inventoryPath);
  if (command === REPORT_COMMAND) return reportInvocation(values, cwd, loadInventory(inventoryPath));
  // The command as typed, for the recovery's report: the `--adopt` or `--drop` it suggests goes after it.
  const rerun = ["npx dmarc-fleet", ...argv.map(shellWord)].join(" ");
  return fleetInvocation(command, values, cwd, loadInventory(inventoryPath), rerun);
}
