import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { stringify } from "yaml";
import { buildPlugin } from "../../scripts/plugin/index.mjs";
import { projectRoot } from "../../scripts/project.mjs";
import { type CliResult, pulumi, pulumiOk } from "../reliability/harness";
import { uniqueStackName, useEngine } from "./engine";
import { onceARun } from "./onceARun";

/**
 * The folder holding `pulumi-resource-dmarc`, for a project's `plugins.providers`: the executable the release
 * carries, as partners install it, built once a run. It starts on a third of the CPU of the npm package's
 * launcher, which has tests of its own (test/plugin/sdk.test.ts, test/package/).
 */
export async function pluginFolder() {
  const { executable } = await onceARun("plugin-executable", () => buildPlugin());
  return dirname(executable);
}

/** A step of `pulumi preview --json`. */
export interface PreviewStep {
  op: string;
  urn: string;
  newState?: { inputs?: Record<string, unknown> };
}

/** One engine event of a streamed preview: a step's, before it and with the outputs it records. */
interface PreviewEvent {
  resourcePreEvent?: { metadata: StepMetadata };
  resOutputsEvent?: { metadata: StepMetadata };
}

interface StepMetadata {
  op: string;
  urn: string;
  new?: { inputs?: Record<string, unknown>; outputs?: Record<string, unknown> };
}

export interface PluginProject {
  folder: string;
  stack: string;
  /** Writes Pulumi.yaml: the project, the plugin from this checkout, and `program` (resources, outputs...). */
  write(program: Record<string, unknown>): void;
  run(args: string[]): Promise<CliResult>;
  /** Like {@link run}, failing with the command's output when it does not succeed. */
  ok(args: string[]): Promise<CliResult>;
  /** The stack's outputs, secrets shown. */
  outputs(): Promise<Record<string, unknown>>;
  /** The steps `pulumi preview --json` shows. */
  previewSteps(): Promise<PreviewStep[]>;
  /** The engine's events of a preview, as `pulumi preview --json` streams them (its steps, and what each records). */
  previewEvents(): Promise<PreviewEvent[]>;
  remove(): Promise<void>;
}

/**
 * A Pulumi YAML project of its own under .cache/projects/, with a fresh
 * stack in the project-local backend, whose program uses the provider plugin
 * built from this checkout.
 */
export async function pluginProject(
  name: string,
  config: Record<string, { value: string; secret?: boolean }>,
  /** Environment over the engine's, for every command (a proxy's variables, a PATH that runs them elsewhere). */
  extraEnv: Record<string, string> = {},
) {
  const env = { ...(await useEngine()), ...extraEnv };
  const plugin = await pluginFolder();
  const folder = join(projectRoot, ".cache", "projects", uniqueStackName(name));
  mkdirSync(folder, { recursive: true });
  const stack = uniqueStackName("stack");
  const project: PluginProject = {
    folder,
    stack,
    write(program) {
      const settings = {
        name,
        runtime: "yaml",
        plugins: { providers: [{ name: "dmarc", path: plugin }] },
        ...program,
      };
      writeFileSync(join(folder, "Pulumi.yaml"), stringify(settings));
    },
    run: (args) => pulumi([...args, "--stack", stack], folder, env),
    ok: (args) => pulumiOk([...args, "--stack", stack], folder, env),
    async outputs() {
      const { stdout } = await project.ok(["stack", "output", "--json", "--show-secrets"]);
      return JSON.parse(stdout) as Record<string, unknown>;
    },
    async previewSteps() {
      const { stdout } = await project.ok(["preview", "--json"]);
      return (JSON.parse(stdout) as { steps: PreviewStep[] }).steps;
    },
    async previewEvents() {
      const streamed = { ...env, PULUMI_ENABLE_STREAMING_JSON_PREVIEW: "true" };
      const { stdout } = await pulumiOk(["preview", "--json", "--stack", stack], folder, streamed);
      return stdout
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as PreviewEvent);
    },
    async remove() {
      await project.run(["stack", "rm", "--yes", "--force"]);
      rmSync(folder, { recursive: true, force: true });
    },
  };
  project.write({});
  await pulumiOk(["stack", "init", stack], folder, env);
  // One CLI start for the whole config: each costs a fraction of a second of CPU, and the suite makes many projects.
  const settings = Object.entries(config).flatMap(([key, { value, secret }]) => [
    secret ? "--secret" : "--plaintext",
    `${key}=${value}`,
  ]);
  if (settings.length > 0) await project.ok(["config", "set-all", ...settings]);
  return project;
}
