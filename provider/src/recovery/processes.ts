import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readlinkSync } from "node:fs";
import { resolve } from "node:path";
import { shortened } from "../cli/shown";
import { readTextIfAny } from "../runtime/readText";

// The processes of Pulumi runs working in a project folder, read from the
// operating system: /proc on Linux, `ps` and `lsof` elsewhere (macOS).
// Pulumi starts its plugins in process groups of their own, so killing the
// CLI, or its group, leaves them running; the recovery has to find them.

type RunProcessRole = "provider" | "language host" | "program";

export interface RunProcess {
  pid: number;
  /** The command line, cut to 120 characters. */
  command: string;
  role: RunProcessRole;
  /** The engine address the process was given (`host:port`), when its command line names one. */
  engineAddress?: string;
  /** Whether a live `pulumi` CLI is among its ancestors. */
  underLiveCli: boolean;
}

interface ProcessEntry {
  pid: number;
  parent: number;
  command: string;
  zombie: boolean;
}

/** How each process of a run is recognised by its command line. */
const ROLES: { role: RunProcessRole; pattern: RegExp }[] = [
  // The Node.js dynamic provider, which outlives the shell wrapper that starts it, and this package's plugin,
  // whose launcher `pulumi-resource-dmarc` hands its process over to node running the package's (or, in this
  // repository, provider/'s) dist/plugin/main.js, named from the launcher's folder: bin/../dist/plugin/main.js.
  {
    role: "provider",
    pattern:
      /@pulumi\/pulumi\/cmd\/dynamic-provider|(pulumi-dmarc-partner|provider)\/(bin\/\.\.\/)?dist\/plugin\/main\.js(\s|$)|(^|\/)pulumi-resource-[\w-]+(\s|$)/,
  },
  { role: "language host", pattern: /(^|\/)pulumi-language-[\w-]+(\s|$)/ },
  { role: "program", pattern: /@pulumi\/pulumi\/cmd\/run(\/index\.js)?\s/ },
];

const CLI = /(^|\/)pulumi(\s|$)/;
const ADDRESS = /^(\[[0-9a-f:]+\]|[\w.-]+):\d+$/i;

/**
 * The engine address on a command line: the program's `--engine` (or its
 * `--monitor`, served by the same engine), else the plugin's address argument.
 */
export function engineAddressOf(command: string): string | undefined {
  const words = command.split(/\s+/).filter((word) => word !== "");
  for (const flag of ["--engine", "--monitor"]) {
    const at = words.indexOf(flag);
    const value = words[at + 1];
    if (at >= 0 && value !== undefined && ADDRESS.test(value)) return value;
  }
  return words.slice(1).find((word) => ADDRESS.test(word));
}

// Linux has /proc; elsewhere (macOS) `ps` and `lsof` are asked.
const ON_LINUX = existsSync("/proc/self/cwd");

/** The state letter and the parent pid, the fields after the parenthesised command name of /proc/<pid>/stat. */
function linuxStat(pid: number | string): { state: string; parent: number } | undefined {
  const stat = readTextIfAny(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined; // gone meanwhile
  const [state = "", parent] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { state, parent: Number(parent) };
}

function linuxProcesses(): ProcessEntry[] {
  const entries: ProcessEntry[] = [];
  for (const name of readdirSync("/proc")) {
    const stat = /^\d+$/.test(name) ? linuxStat(name) : undefined;
    if (stat === undefined) continue;
    const command = (readTextIfAny(`/proc/${name}/cmdline`) ?? "").split("\0").join(" ").trim();
    entries.push({ pid: Number(name), parent: stat.parent, command, zombie: stat.state === "Z" });
  }
  return entries;
}

function psProcesses(): ProcessEntry[] {
  const listing = execFileSync("ps", ["-axo", "pid=,ppid=,stat=,command="], { encoding: "utf8" });
  return listing.split("\n").flatMap((line) => {
    const match = /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/.exec(line);
    if (!match) return [];
    const [, pid, parent, state, command] = match as unknown as [string, string, string, string, string];
    return [{ pid: Number(pid), parent: Number(parent), command: command.trim(), zombie: state.startsWith("Z") }];
  });
}

function cwdOf(pid: number): string | undefined {
  if (ON_LINUX) {
    try {
      return readlinkSync(`/proc/${pid}/cwd`);
    } catch {
      return undefined; // gone meanwhile, or another user's
    }
  }
  try {
    const out = execFileSync("lsof", ["-a", "-d", "cwd", "-p", String(pid), "-Fn"], { encoding: "utf8" });
    return out
      .split("\n")
      .find((line) => line.startsWith("n"))
      ?.slice(1);
  } catch {
    return undefined;
  }
}

/** Alive, not a zombie: a zombie has ended, only its parent's wait is missing (init in a container may never reap it). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  if (ON_LINUX) {
    const stat = linuxStat(pid);
    return stat !== undefined && stat.state !== "Z";
  }
  try {
    return !execFileSync("ps", ["-o", "stat=", "-p", String(pid)], { encoding: "utf8" })
      .trim()
      .startsWith("Z");
  } catch {
    return false;
  }
}

// ESTABLISHED and SYN_SENT in /proc/net/tcp: a connection in use or being opened.
const OPEN_TCP_STATES = new Set(["01", "02"]);

/**
 * Whether `pid` holds a TCP connection that is open or opening: a request it
 * may still be waiting on. Connections to an engine that is gone are closed
 * on the engine's side, so they do not count. Where this cannot be read, the
 * answer is yes: the caller then waits its whole bound.
 */
export function hasOpenConnections(pid: number): boolean {
  if (!ON_LINUX) {
    try {
      const out = execFileSync("lsof", ["-a", "-p", String(pid), "-iTCP", "-sTCP:ESTABLISHED,SYN_SENT", "-Fn"], {
        encoding: "utf8",
      });
      return out.split("\n").some((line) => line.startsWith("n"));
    } catch (error) {
      // lsof exits 1 when it lists nothing.
      return (error as { status?: number }).status !== 1;
    }
  }
  let sockets: Set<string>;
  try {
    sockets = new Set(
      readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
        try {
          const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
          return target.startsWith("socket:[") ? [target.slice(8, -1)] : [];
        } catch {
          return [];
        }
      }),
    );
  } catch {
    return existsSync(`/proc/${pid}`);
  }
  for (const table of ["tcp", "tcp6"]) {
    const rows = (readTextIfAny(`/proc/${pid}/net/${table}`) ?? "").split("\n").slice(1);
    for (const row of rows) {
      const columns = row.trim().split(/\s+/);
      if (OPEN_TCP_STATES.has(columns[3] ?? "") && sockets.has(columns[9] ?? "")) return true;
    }
  }
  return false;
}

/**
 * This process and its ancestors: never a run's. A pipeline runs recovery
 * under wrappers (`timeout 600 pulumi-resource-dmarc recover ...`) whose
 * command lines name the plugin's executable as a run's provider's do.
 */
function ownLine(byPid: ReadonlyMap<number, ProcessEntry>): Set<number> {
  const line = new Set([process.pid]);
  for (let current = byPid.get(process.pid); current && current.parent > 1 && !line.has(current.parent); ) {
    line.add(current.parent);
    current = byPid.get(current.parent);
  }
  return line;
}

/** The processes of Pulumi runs (providers, language hosts, programs) working in `workDir`, live or not. */
export function runProcessesIn(workDir: string): RunProcess[] {
  const folder = resolve(workDir);
  const table = ON_LINUX ? linuxProcesses() : psProcesses();
  const byPid = new Map(table.map((entry) => [entry.pid, entry]));
  const underLiveCli = (entry: ProcessEntry): boolean => {
    for (let current = byPid.get(entry.parent), depth = 0; current && current.pid > 1 && depth < 16; depth++) {
      if (CLI.test(current.command) && !current.zombie) return true;
      current = byPid.get(current.parent);
    }
    return false;
  };
  const ours = ownLine(byPid);
  const found: RunProcess[] = [];
  for (const entry of table) {
    const role = ROLES.find(({ pattern }) => pattern.test(entry.command))?.role;
    if (!role || entry.zombie || ours.has(entry.pid) || cwdOf(entry.pid) !== folder) continue;
    found.push({
      pid: entry.pid,
      command: shortened(entry.command, 120),
      role,
      engineAddress: engineAddressOf(entry.command),
      underLiveCli: underLiveCli(entry),
    });
  }
  return found;
}
