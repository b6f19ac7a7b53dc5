import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalWorkspace } from "@pulumi/pulumi/automation";
import type { BackendListing } from "../checkpoint/backendRecords";
import { type Deployment, parseDeployment } from "../checkpoint/deployment";

// The stack as recovery reaches it: through the `pulumi` CLI, so every
// backend works the same. State goes out with `pulumi stack export` without
// `--show-secrets` (the Automation API's exportStack decrypts, so it is not
// used) and back with `pulumi stack import`: secrets stay ciphertext.

export interface StackAccessOptions {
  stackName: string;
  /** The project folder (where Pulumi.yaml is). */
  workDir: string;
  /** Extra environment for the `pulumi` CLI, e.g. PULUMI_BACKEND_URL or PULUMI_CONFIG_PASSPHRASE. */
  env?: Record<string, string>;
}

export interface StackAccess extends BackendListing {
  stackName: string;
  workDir: string;
  projectName: string;
  /** The backend URL `pulumi whoami` reports, e.g. `file:///srv/state`. */
  backendUrl: string | undefined;
  exportState(): Promise<Deployment>;
  importState(state: Deployment): Promise<void>;
  refresh(): Promise<void>;
  /** The stack's config, secrets decrypted with the stack's secrets provider. */
  config(): Promise<Record<string, string>>;
}

export class PulumiCommandFailed extends Error {
  override name = "PulumiCommandFailed";
  constructor(
    readonly args: readonly string[],
    readonly code: number | null,
    readonly output: string,
  ) {
    super(`pulumi ${args.join(" ")} exited ${code}:\n${output.trim()}`);
  }
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args, "--non-interactive"], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      const out = Buffer.concat(stdout).toString("utf8");
      if (code === 0) resolve(out);
      else reject(new PulumiCommandFailed(args, code, `${out}\n${Buffer.concat(stderr).toString("utf8")}`));
    });
  });
}

/**
 * Every stack of the backend through the CLI (`pulumi stack ls --all`, then
 * `pulumi stack export` of each, secrets left encrypted): for backends whose
 * files or rows cannot be read directly.
 */
export function cliListing(command: string, workDir: string, env: NodeJS.ProcessEnv): BackendListing {
  return {
    async listAllStacks() {
      const listed = JSON.parse(await run(command, ["stack", "ls", "--all", "--json"], workDir, env)) as {
        name: string;
      }[];
      return listed.map((entry) => entry.name);
    },
    exportOther: async (name) =>
      parseDeployment(await run(command, ["stack", "export", "--stack", name], workDir, env)),
  };
}

export async function openStack(options: StackAccessOptions): Promise<StackAccess> {
  const env = { ...process.env, ...options.env };
  const workspace = await LocalWorkspace.create({ workDir: options.workDir, envVars: options.env ?? {} });
  const command = workspace.pulumiCommand.command;
  const { stackName, workDir } = options;
  const pulumi = (...args: string[]) => run(command, [...args, "--stack", stackName], workDir, env);
  const [project, whoami] = await Promise.all([workspace.projectSettings(), workspace.whoAmI()]);
  return {
    stackName,
    workDir,
    projectName: project.name,
    backendUrl: whoami.url ?? env.PULUMI_BACKEND_URL,
    exportState: async () => parseDeployment(await pulumi("stack", "export")),
    ...cliListing(command, workDir, env),
    async importState(state) {
      const folder = mkdtempSync(join(tmpdir(), "dmarc-recover-"));
      const file = join(folder, "state.json");
      try {
        writeFileSync(file, JSON.stringify(state), { mode: 0o600 });
        await pulumi("stack", "import", "--file", file);
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    },
    async refresh() {
      await pulumi("refresh", "--yes", "--skip-preview");
    },
    async config() {
      const all = await workspace.getAllConfig(stackName);
      return Object.fromEntries(Object.entries(all).map(([key, { value }]) => [key, value]));
    },
  };
}
