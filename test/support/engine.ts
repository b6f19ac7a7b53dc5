import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { LocalWorkspace, PulumiCommand, type PulumiFn, type Stack } from "@pulumi/pulumi/automation";
import { ensureEngine } from "../../scripts/engine/index.mjs";
import { projectRoot } from "../../scripts/project.mjs";

let engineEnv: Promise<Record<string, string>> | undefined;
let engineCommand: Promise<PulumiCommand> | undefined;

/**
 * The suite starts the CLI a few thousand times, mostly for short commands (config, stack output, tags),
 * whose start-up Go's collector slows at its default of 100: at 400, `pulumi stack output` took 0.17 s of
 * CPU instead of 0.27 s here. The tests' CLIs only; a partner's and the benchmark's run as Pulumi ships them.
 */
const TEST_GOGC = "400";

/** The engine environment of scripts/engine/, applied to this process so the Automation API finds the CLI. */
export function useEngine(): Promise<Record<string, string>> {
  engineEnv ??= ensureEngine().then(({ env }) => {
    Object.assign(process.env, env, { GOGC: process.env.GOGC ?? TEST_GOGC });
    return env;
  });
  return engineEnv;
}

/** The engine's CLI, asked its version once per test process: the Automation API otherwise runs `pulumi version` for every stack. */
function useEngineCommand(): Promise<PulumiCommand> {
  engineCommand ??= useEngine().then(() => PulumiCommand.get());
  return engineCommand;
}

export function uniqueStackName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(3).toString("hex")}`;
}

export interface TestStackOptions {
  projectName: string;
  program: PulumiFn;
  /** Stack config, e.g. `{ "dmarc:baseUrl": { value: url } }`. */
  config?: Record<string, { value: string; secret?: boolean }>;
  /** Extra environment for the CLI and the plugins it starts. */
  env?: Record<string, string>;
  /**
   * A backend of the stack's own (`file://<folder>`) instead of the shared one: a fleet test's
   * `stack ls` in the shared backend reads every stack's checkpoint, and fails on one being written.
   */
  backendUrl?: string;
}

/**
 * A project folder of its own under .cache/ (the workspace writes Pulumi.yaml
 * there), whose node_modules is the project's: the dynamic provider process
 * resolves the package from there, as it would in a partner's project.
 */
function projectFolder(projectName: string): string {
  const folder = join(projectRoot, ".cache", "projects", projectName);
  mkdirSync(folder, { recursive: true });
  const modules = join(folder, "node_modules");
  if (!existsSync(modules)) symlinkSync(join(projectRoot, "node_modules"), modules, "dir");
  return folder;
}

/** A fresh stack in the project-local file backend, running an inline program. */
export async function createTestStack(options: TestStackOptions): Promise<Stack> {
  const env = await useEngine();
  const backendUrl = options.backendUrl ?? env.PULUMI_BACKEND_URL;
  const stack = await LocalWorkspace.createStack(
    { stackName: uniqueStackName(options.projectName), projectName: options.projectName, program: options.program },
    {
      pulumiCommand: await useEngineCommand(),
      workDir: projectFolder(options.projectName),
      envVars: { ...env, ...(backendUrl ? { PULUMI_BACKEND_URL: backendUrl } : {}), ...options.env },
      projectSettings: { name: options.projectName, runtime: "nodejs", backend: { url: backendUrl } },
    },
  );
  if (options.config) await stack.setAllConfig(options.config);
  return stack;
}

/** The stack's checkpoint exactly as the file backend stores it (secrets encrypted), as text. */
export async function storedState(stack: Stack): Promise<string> {
  const { name: projectName } = await stack.workspace.projectSettings();
  const backend = fileURLToPath(process.env.PULUMI_BACKEND_URL ?? "");
  return readFileSync(join(backend, ".pulumi", "stacks", projectName, `${stack.name}.json`), "utf8");
}

interface RecordedResource {
  type: string;
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
}

/**
 * The `__provider` each of our resources recorded, by type, where inputs and
 * outputs hold the same text: what a later engine run loads to reach the
 * package. Fails when the two differ.
 */
export function recordedProviders(resources: readonly RecordedResource[]): Map<string, string> {
  const byType = new Map<string, string>();
  for (const resource of resources.filter((entry) => entry.type.startsWith("pulumi-nodejs:dynamic/dmarc:"))) {
    const { inputs, outputs } = resource;
    if (inputs?.__provider !== outputs?.__provider) {
      throw new Error(`${resource.type}: inputs and outputs record different providers`);
    }
    byType.set(resource.type.slice(resource.type.lastIndexOf(":") + 1), String(inputs?.__provider));
  }
  return byType;
}
