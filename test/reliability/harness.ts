import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { EmulatorPartner, StateSnapshot } from "dmarc-partner-emulator";
import { closeClients } from "pulumi-dmarc-partner/client";
import { afterAll, expect } from "vitest";
import { projectRoot } from "../../scripts/project.mjs";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";

// What the reliability suite shares: the switch between the representative
// subset and the full matrix, the emulator's counters, figures, and running
// the real `pulumi` CLI on a program folder.

/** Starts an emulator per case; each is closed, with the package's client pools, once the file's cases ran. */
export function emulatorPerCase(): () => Promise<EmulatorHandle> {
  const handles: EmulatorHandle[] = [];
  afterAll(async () => {
    await closeClients();
    await Promise.all(handles.map((handle) => handle.emulator.close()));
  });
  return async () => {
    const handle = await startTestEmulator();
    handles.push(handle);
    return handle;
  };
}

/** The routes that create an object of the fleet program. */
const CREATE_ROUTES = [
  "POST /v1/organizations",
  "POST /v1/domain-groups",
  "POST /v1/domains",
  "POST /v1/domains/batch",
  "POST /v1/webhooks",
  "POST /v1/partners/subscriptions/assign",
  "POST /v1/users/invite",
];

/** The routes a domain is created on: alone, or with the others of its organisation that came at the same time. */
export const DOMAIN_CREATE_ROUTES = ["POST /v1/domains", "POST /v1/domains/batch"];

/** Requests the service received on `route` (`POST /v1/domains`). */
export const routeCount = (counted: Stats, route: string) => counted.byRoute[route] ?? 0;

/** Domain create requests the service received, alone or in batches. */
export const domainCreates = (counted: Stats) =>
  DOMAIN_CREATE_ROUTES.reduce((sum, route) => sum + routeCount(counted, route), 0);

/**
 * The fewest create requests one tenant of the reliability fleet makes:
 * organisation, group, subscription, webhook and invitation, and its two
 * domains in one batch when they arrive together (one by one, they are seven).
 */
export const CREATE_REQUESTS_PER_TENANT = 6;

/** Creates the service received, on every {@link CREATE_ROUTES}. */
export const creates = (counted: Stats) => CREATE_ROUTES.reduce((sum, route) => sum + routeCount(counted, route), 0);

/** `DMARC_RELIABILITY=full` (`npm run test:reliability`) runs every case; `npm test` runs a representative few. */
export const FULL = process.env.DMARC_RELIABILITY === "full";

export interface Stats {
  requests: number;
  byRoute: Record<string, number>;
  byStatus: Record<string, number>;
  rateLimited: number;
  dropped: number;
}

export const stats = (handle: EmulatorHandle) => handle.control<Stats>("GET", "/stats");
export const emulatorState = (handle: EmulatorHandle) => handle.control<StateSnapshot>("GET", "/state");

/** Requests the emulator has received but not yet answered (or dropped). */
export function inFlight(counted: Stats): number {
  const answered = Object.values(counted.byStatus).reduce((sum, count) => sum + count, 0);
  return counted.requests - answered - counted.dropped;
}

const hex = (bytes: number) => randomBytes(bytes).toString("hex");

/** Two partners with random credentials, so that one found in a log or a message cannot be a coincidence. */
export function randomPartners(prefix: string): [EmulatorPartner, EmulatorPartner] {
  const partner = (name: string): EmulatorPartner => ({
    id: `${prefix}-${name}`,
    name: `${prefix} ${name}`,
    clientId: `client-${hex(6)}`,
    clientSecret: `client-secret-${hex(16)}`,
    tokens: [`static-token-${hex(16)}`],
  });
  return [partner("alpha"), partner("beta")];
}

const figuresFile = join(projectRoot, ".cache", "reliability", "figures.jsonl");

/** Prints a case's figures and keeps them in .cache/reliability/figures.jsonl for the report. */
export function report(suite: string, name: string, figures: Record<string, unknown>): void {
  mkdirSync(join(projectRoot, ".cache", "reliability"), { recursive: true });
  const line = JSON.stringify({ suite, name, full: FULL, at: new Date().toISOString(), ...figures });
  appendFileSync(figuresFile, `${line}\n`);
  console.info(`[reliability] ${suite} / ${name}: ${JSON.stringify(figures)}`);
}

/** Polls `probe` until `done` holds; bounded, failing with `what` when it never does. */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  attempts = 300,
): Promise<T> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    const value = await probe();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`gave up waiting: ${what}`);
}

/**
 * A program folder as a partner's repository has it: Pulumi.yaml, package.json,
 * index.ts, and node_modules linked to the project's, under .cache/projects/.
 */
export function programFolder(name: string, source: string): string {
  const folder = join(projectRoot, ".cache", "projects", name);
  mkdirSync(folder, { recursive: true });
  const modules = join(folder, "node_modules");
  if (!existsSync(modules)) symlinkSync(join(projectRoot, "node_modules"), modules, "dir");
  writeFileSync(join(folder, "Pulumi.yaml"), `name: ${name}\nruntime: nodejs\n`);
  writeFileSync(join(folder, "package.json"), `${JSON.stringify({ name, private: true }, null, 2)}\n`);
  writeFileSync(join(folder, "index.ts"), source);
  return folder;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Starts a command in `cwd`, collecting its output; `done` resolves once it has ended. */
export function startCommand(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
  options: { detached?: boolean } = {},
): { child: ChildProcess; done: Promise<CliResult> } {
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: options.detached ?? false,
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
  return { child, done };
}

/** Runs a command to completion in `cwd`, collecting its output. */
function collect(command: string, args: string[], cwd: string, env: Record<string, string>): Promise<CliResult> {
  return startCommand(command, args, cwd, env).done;
}

/** Runs the `pulumi` CLI to completion in `cwd`, collecting its output. */
export function pulumi(args: string[], cwd: string, env: Record<string, string>): Promise<CliResult> {
  return collect("pulumi", [...args, "--non-interactive"], cwd, env);
}

/** Like {@link pulumi}, failing with the command's output when it does not succeed. */
export async function pulumiOk(args: string[], cwd: string, env: Record<string, string>): Promise<CliResult> {
  const result = await pulumi(args, cwd, env);
  if (result.code !== 0) {
    throw new Error(`pulumi ${args.join(" ")} exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
  }
  return result;
}

/** Every process below `pid` (Linux /proc): the plugins and programs the CLI started. */
export function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // exited meanwhile
    }
    // Fields after the parenthesised command name: state, then the parent pid.
    const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    parents.set(parent, [...(parents.get(parent) ?? []), Number(entry)]);
  }
  const found: number[] = [];
  const queue = [pid];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const child of parents.get(next) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** Processes working in `folder` (Linux /proc): the plugins of a `pulumi` run on that project, orphaned or not. */
export function processesIn(folder: string): number[] {
  return processesWhere((cwd) => cwd === folder);
}

/** Processes working in `folder` or a folder below it, such as a fleet's shard work folders. */
export function processesUnder(folder: string): number[] {
  return processesWhere((cwd) => cwd === folder || cwd.startsWith(`${folder}/`));
}

function processesWhere(inFolder: (cwd: string) => boolean): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (inFolder(readlinkSync(`/proc/${entry}/cwd`)) && isRunning(Number(entry))) found.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

/** The command line of `pid` (Linux /proc), its arguments joined by spaces; empty once it is gone. */
function commandLineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    return "";
  }
}

/** A Pulumi plugin (`pulumi-resource-*`, `pulumi-language-*`) or the Node.js dynamic provider one starts. */
export function isPlugin(pid: number): boolean {
  return /pulumi-(resource|language)-|@pulumi\/pulumi\/cmd\/dynamic-provider/.test(commandLineOf(pid));
}

/** The language host, or the program it runs (`@pulumi/pulumi/cmd/run`). */
export function isLanguageHostOrProgram(pid: number): boolean {
  return /pulumi-language-|@pulumi\/pulumi\/cmd\/run/.test(commandLineOf(pid));
}

/** Alive, not merely a zombie waiting for its new parent to reap it. */
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** SIGKILL by pid; a process that is already gone is fine. */
export function kill(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}

/** The `pulumi` CLI processes among `pids`: an engine each. */
export function pulumiCli(pids: number[]): number[] {
  return pids.filter((pid) => /^(\S*\/)?pulumi(\s|$)/.test(commandLineOf(pid)));
}

/** Runs the package's `dmarc-recover` command, as `npx dmarc-recover` would, in the program folder. */
export function dmarcRecover(args: string[], cwd: string, env: Record<string, string>): Promise<CliResult> {
  return collect(process.execPath, [join(projectRoot, "provider", "bin", "dmarc-recover.js"), ...args], cwd, env);
}

/**
 * Pulumi's own tracing of property values, the only lines allowed to carry a
 * webhook secret or a magic link: the engine's RPC marshaling (-v=9), and the
 * Node.js SDK's debug message with each RegisterResource answer (-v=3 and
 * up), logged by the engine as it arrives and again as its event sink shows it.
 */
const PULUMI_VALUE_TRACING =
  /^(?:(?:Marshaling|Unmarshaling) property for RPC\[|(?:eventSink::Debug\(<\{%reset%\}>)?RegisterResource RPC finished: )/;

/**
 * A line's message: a JSON log line's, without the engine's event sink
 * wrapper (`eventSink::Infoerr(<{%reset%}>`, its echo of a plugin's standard
 * error) and a Go log header (`I1127 11:51:47.574533 26098 rpc.go:301] `).
 */
function tracedMessage(line: string): string {
  const text = line.startsWith("{") ? (JSON.parse(line) as { msg: string }).msg : line;
  return text.replace(/^eventSink::\w+\(<\{%reset%\}>/, "").replace(/^.*?[IWE]\d{4} [\d:.]+ +\d+ [\w.]+:\d+\] /, "");
}

/**
 * Holds output and log lines to the secrets' rule: no credential anywhere,
 * and each of the `others` (webhook secrets, links, keys) only in Pulumi's
 * own value tracing. Answers how many tracing lines carried one, by kind.
 */
export function secretsOnlyInValueTracing(
  lines: readonly string[],
  credentials: readonly string[],
  others: readonly string[],
): Record<string, number> {
  const tracing: Record<string, number> = {};
  for (const line of lines) {
    for (const secret of credentials) expect(line.includes(secret), "a credential in the output or logs").toBe(false);
    if (!others.some((secret) => line.includes(secret))) continue;
    const message = tracedMessage(line);
    expect(message, "a secret outside Pulumi's value tracing").toMatch(PULUMI_VALUE_TRACING);
    const kind = PULUMI_VALUE_TRACING.exec(message)?.[0] ?? "";
    tracing[kind] = (tracing[kind] ?? 0) + 1;
  }
  return tracing;
}

/** Files of the file backend that belong to the stack (every name given in their path): checkpoint, history, backups. */
export function backendFiles(...names: string[]): string[] {
  const root = join(fileURLToPath(process.env.PULUMI_BACKEND_URL ?? ""), ".pulumi");
  const found: string[] = [];
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder)) {
      const path = join(folder, entry);
      if (statSync(path).isDirectory()) walk(path);
      else if (names.every((name) => path.includes(name))) found.push(path);
    }
  };
  walk(root);
  return found;
}
