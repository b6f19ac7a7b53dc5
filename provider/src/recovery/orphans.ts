import { connect } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { CLIENT_DEFAULTS } from "../client/options";
import type { ProviderSettings } from "../runtime/config";
import { hasOpenConnections, isRunning, type RunProcess, runProcessesIn } from "./processes";

// A killed `pulumi` leaves its plugins running with no engine to answer to.
// Such an orphan can still finish the calls it had sent to the service (a
// create whose object then exists), but it cannot start a new one: a call
// starts only when the engine asks. So the recovery waits, bounded by how
// long one call may take with all its retries, until the orphan holds no
// open connection, then stops it, and only then reads the service. This
// package's provider exits by itself at that moment (providerHost.ts); any
// other plugin is stopped here.

export interface RunProcesses {
  /** Processes of a run that is alive: never touched, the recovery refuses. */
  live: RunProcess[];
  /** Processes whose engine is gone. */
  orphans: RunProcess[];
}

export type StoppedBy = "exited" | "SIGTERM" | "SIGKILL";

export interface StoppedOrphan extends RunProcess {
  /** How long the orphan was given to finish its calls, in milliseconds. */
  waitedMs: number;
  stoppedBy: StoppedBy;
}

export interface SettleOptions {
  /** The longest an orphan is given to finish its calls (see {@link inFlightBoundMs}). */
  boundMs: number;
  /** Between two looks at an orphan. Default 250 ms. */
  pollMs?: number;
  /** How long SIGTERM, then SIGKILL, is given to end the process. Default 5 s each. */
  graceMs?: number;
}

// The engine answers on loopback or not at all: a refused or unreachable address means it is gone.
const ENGINE_GONE = new Set(["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "EADDRNOTAVAIL"]);

/** Whether something still accepts connections at the engine address `host:port`; a timeout counts as yes. */
function engineAnswers(address: string, timeoutMs = 2_000): Promise<boolean> {
  const split = address.lastIndexOf(":");
  const host = address.slice(0, split).replace(/^\[|\]$/g, "");
  const port = Number(address.slice(split + 1));
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: timeoutMs });
    const answer = (value: boolean) => {
      socket.destroy();
      resolve(value);
    };
    socket.once("connect", () => answer(true));
    socket.once("timeout", () => answer(true));
    socket.once("error", (error: NodeJS.ErrnoException) => answer(!ENGINE_GONE.has(error.code ?? "")));
  });
}

/**
 * The run processes in `workDir`, split: an orphan has no live `pulumi`
 * among its ancestors and its engine address refuses connections. Without
 * a known engine address a process counts as live.
 */
export async function findRunProcesses(workDir: string): Promise<RunProcesses> {
  const processes = runProcessesIn(workDir);
  const gone = await Promise.all(
    processes.map(
      async (found) =>
        !found.underLiveCli && found.engineAddress !== undefined && !(await engineAnswers(found.engineAddress)),
    ),
  );
  return {
    live: processes.filter((_, index) => !gone[index]),
    orphans: processes.filter((_, index) => gone[index]),
  };
}

/**
 * How long one call of the provider may still be under way: the retries stop
 * starting once `maxRetryElapsedMs` has passed, and the last attempt may then
 * take its connect and request timeouts, as the stack's provider settings
 * give them.
 */
export function inFlightBoundMs(settings: ProviderSettings): number {
  const setting = (key: "connectTimeoutMs" | "requestTimeoutMs" | "maxRetryElapsedMs") => {
    const value = Number(settings[key]);
    return Number.isInteger(value) && value >= 0 ? value : CLIENT_DEFAULTS[key];
  };
  return setting("connectTimeoutMs") + setting("requestTimeoutMs") + setting("maxRetryElapsedMs");
}

async function endsWithin(pid: number, ms: number, pollMs: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (isRunning(pid)) {
    if (Date.now() >= deadline) return false;
    await sleep(pollMs);
  }
  return true;
}

function signal(pid: number, name: "SIGTERM" | "SIGKILL"): void {
  try {
    process.kill(pid, name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}

async function settleOne(orphan: RunProcess, options: Required<SettleOptions>): Promise<StoppedOrphan> {
  const started = Date.now();
  const waited = () => Date.now() - started;
  while (isRunning(orphan.pid) && hasOpenConnections(orphan.pid) && waited() < options.boundMs) {
    await sleep(options.pollMs);
  }
  const waitedMs = waited();
  if (!isRunning(orphan.pid)) return { ...orphan, waitedMs, stoppedBy: "exited" };
  for (const name of ["SIGTERM", "SIGKILL"] as const) {
    signal(orphan.pid, name);
    if (await endsWithin(orphan.pid, options.graceMs, options.pollMs)) return { ...orphan, waitedMs, stoppedBy: name };
  }
  throw new Error(`pid ${orphan.pid} (${orphan.command}) of a killed run did not end after SIGKILL`);
}

/** Waits for each orphan's calls (bounded), then stops it: SIGTERM, then SIGKILL. */
export function settleOrphans(orphans: readonly RunProcess[], options: SettleOptions): Promise<StoppedOrphan[]> {
  const settled = { pollMs: 250, graceMs: 5_000, ...options };
  return Promise.all(orphans.map((orphan) => settleOne(orphan, settled)));
}
