import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { LocalWorkspace, type OpMap, type ProjectSettings, type PulumiFn, type Stack } from "@pulumi/pulumi/automation";
import { closeClients } from "pulumi-dmarc-partner/client";
import type { BenchEmulator } from "./emulator";
import { type FleetSpec, fleetProgram, type Phase } from "./fleet";
import { runProcess } from "./processes";
import { type StateFootprint, stateFootprint } from "./state";

export const PROJECT_NAME = "dmarc-bench";
const REMOVE_TIMEOUT_MS = 60_000;

export interface StackSettings {
  projectRoot: string;
  backendUrl: string;
  emulator: BenchEmulator;
  parallel: number | undefined;
  pace: number | undefined;
  maxConcurrency: number | undefined;
  skipCheckpoints: boolean;
  verbose: boolean;
}

/**
 * A project folder under .cache/projects whose node_modules is the project's:
 * the dynamic provider process resolves `pulumi-dmarc-partner` from there, as
 * it would in a partner's project.
 */
export function projectFolder(projectRoot: string, projectName: string = PROJECT_NAME): string {
  const folder = join(projectRoot, ".cache", "projects", projectName);
  mkdirSync(folder, { recursive: true });
  const modules = join(folder, "node_modules");
  if (!existsSync(modules)) symlinkSync(join(projectRoot, "node_modules"), modules, "dir");
  return folder;
}

/** A project the bench deploys: its name, its inline program and the provider plugins it names. */
export interface BenchProject {
  name: string;
  /** Its folder under .cache/projects; default its name. */
  folder?: string;
  program: PulumiFn;
  /** Provider plugins by name, each the folder of its launcher (Pulumi.yaml's `plugins.providers`). */
  pluginFolders?: Record<string, string>;
}

/** A fresh stack of its own name (`bench-<tenants>-…`) in the file backend, configured with the emulator's account. */
export async function createBenchStack(
  project: BenchProject,
  tenants: number,
  settings: StackSettings,
): Promise<Stack> {
  const stackName = `bench-${tenants}-${Date.now().toString(36)}-${randomBytes(3).toString("hex")}`;
  const providers = Object.entries(project.pluginFolders ?? {}).map(([name, path]) => ({ name, path }));
  // The Automation API's ProjectSettings type has no `plugins`, which the engine reads from Pulumi.yaml all the same.
  const projectSettings = {
    name: project.name,
    runtime: "nodejs",
    backend: { url: settings.backendUrl },
    ...(providers.length > 0 ? { plugins: { providers } } : {}),
  } as ProjectSettings;
  const stack = await LocalWorkspace.createStack(
    { stackName, projectName: project.name, program: project.program },
    {
      workDir: projectFolder(settings.projectRoot, project.folder ?? project.name),
      envVars: settings.skipCheckpoints ? { PULUMI_SKIP_CHECKPOINTS: "true" } : {},
      projectSettings,
    },
  );
  const { url, partner } = settings.emulator;
  await stack.setAllConfig({
    "dmarc:baseUrl": { value: url },
    "dmarc:clientId": { value: partner.clientId },
    "dmarc:clientSecret": { value: partner.clientSecret, secret: true },
    "dmarc:partnerId": { value: partner.id },
    ...(settings.pace === undefined ? {} : { "dmarc:requestsPerSecond": { value: String(settings.pace) } }),
    ...(settings.maxConcurrency === undefined
      ? {}
      : { "dmarc:maxConcurrency": { value: String(settings.maxConcurrency) } }),
  });
  return stack;
}

/** A fresh stack deploying the generated fleet through the provider's settings. */
export function createFleetStack(spec: FleetSpec, settings: StackSettings): Promise<Stack> {
  return createBenchStack({ name: PROJECT_NAME, program: fleetProgram(spec) }, spec.tenants, settings);
}

function counts(changes: OpMap | undefined): Record<string, number> {
  const result: Record<string, number> = {};
  for (const [op, count] of Object.entries(changes ?? {})) if (count) result[op] = count;
  return result;
}

function onlySame(changes: Record<string, number>): boolean {
  return Object.keys(changes).every((op) => op === "same");
}

/** Runs one phase on the stack; fails when a phase that must change nothing changed something. */
async function runPulumiPhase(stack: Stack, phase: Phase, settings: StackSettings): Promise<Record<string, number>> {
  const options = {
    ...(settings.parallel === undefined ? {} : { parallel: settings.parallel }),
    ...(settings.verbose ? { onOutput: (out: string) => process.stderr.write(out) } : {}),
  };
  switch (phase) {
    case "up":
      return counts((await stack.up(options)).summary.resourceChanges);
    case "preview": {
      const changes = counts((await stack.preview(options)).changeSummary);
      if (!onlySame(changes)) throw new Error(`the no-change preview planned changes: ${JSON.stringify(changes)}`);
      return changes;
    }
    case "refresh": {
      const changes = counts((await stack.refresh(options)).summary.resourceChanges);
      if (!onlySame(changes)) throw new Error(`refresh found drift: ${JSON.stringify(changes)}`);
      return changes;
    }
    case "destroy":
      return counts((await stack.destroy(options)).summary.resourceChanges);
  }
}

/**
 * Destroys what is left and removes the stack with its backups, which the
 * file backend would otherwise keep (a full checkpoint per update). When
 * destroy itself fails the stack is removed anyway: its objects lived in the
 * bench's in-memory emulator, which goes away with the bench.
 */
async function discardStack(stack: Stack, destroyed: boolean): Promise<void> {
  let force = false;
  if (!destroyed) {
    force = await stack.destroy().then(
      () => false,
      () => true,
    );
  }
  // The Automation API's removeStack cannot ask for --remove-backups.
  const args = ["stack", "rm", "--yes", "--remove-backups", ...(force ? ["--force"] : []), "--stack", stack.name];
  await runProcess("pulumi", args, { cwd: stack.workspace.workDir, timeoutMs: REMOVE_TIMEOUT_MS });
}

/**
 * Runs the phases on the stack, each through `measure`, reads the checkpoint
 * after `up` (`resources`: what the program declares), then removes the stack
 * whatever happened.
 */
export async function runStackPhases<R>(
  stack: Stack,
  projectName: string,
  resources: number,
  phases: readonly Phase[],
  settings: StackSettings,
  measure: (phase: Phase, action: () => Promise<Record<string, number>>) => Promise<R>,
): Promise<{ results: R[]; state: StateFootprint | null }> {
  const results: R[] = [];
  let state: StateFootprint | null = null;
  let destroyed = false;
  try {
    for (const phase of phases) {
      // The inline program runs in this process and would keep its token from the last phase; a CLI run starts without.
      await closeClients();
      results.push(await measure(phase, () => runPulumiPhase(stack, phase, settings)));
      if (phase === "up") state = stateFootprint(settings.backendUrl, projectName, stack.name, resources) ?? null;
      if (phase === "destroy") destroyed = true;
    }
  } finally {
    await discardStack(stack, destroyed);
  }
  return { results, state };
}
