import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { LocalWorkspace, type OpMap, type Stack } from "@pulumi/pulumi/automation";
import type { BenchEmulator } from "./emulator";
import { type FleetSpec, fleetProgram, type Phase } from "./fleet";

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

/** A fresh stack of its own name in the file backend, deploying the fleet through the provider's settings. */
export async function createFleetStack(spec: FleetSpec, settings: StackSettings): Promise<Stack> {
  const stackName = `bench-${spec.tenants}-${Date.now().toString(36)}-${randomBytes(3).toString("hex")}`;
  const stack = await LocalWorkspace.createStack(
    { stackName, projectName: PROJECT_NAME, program: fleetProgram(spec) },
    {
      workDir: projectFolder(settings.projectRoot),
      envVars: settings.skipCheckpoints ? { PULUMI_SKIP_CHECKPOINTS: "true" } : {},
      projectSettings: { name: PROJECT_NAME, runtime: "nodejs", backend: { url: settings.backendUrl } },
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

function counts(changes: OpMap | undefined): Record<string, number> {
  const result: Record<string, number> = {};
  for (const [op, count] of Object.entries(changes ?? {})) if (count) result[op] = count;
  return result;
}

function onlySame(changes: Record<string, number>): boolean {
  return Object.keys(changes).every((op) => op === "same");
}

/** Runs one phase on the stack; fails when a phase that must change nothing changed something. */
export async function runPulumiPhase(
  stack: Stack,
  phase: Phase,
  settings: StackSettings,
): Promise<Record<string, number>> {
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
export async function discardStack(stack: Stack, destroyed: boolean): Promise<void> {
  let force = false;
  if (!destroyed) {
    force = await stack.destroy().then(
      () => false,
      () => true,
    );
  }
  // The Automation API's removeStack cannot ask for --remove-backups.
  const args = ["stack", "rm", "--yes", "--remove-backups", ...(force ? ["--force"] : []), "--stack", stack.name];
  await promisify(execFile)("pulumi", args, { cwd: stack.workspace.workDir, timeout: REMOVE_TIMEOUT_MS });
}
