import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { basename } from "node:path";

// Peak memory, CPU time and file writes of the processes a phase starts,
// read from /proc while the phase runs: the engine (`pulumi`), the language
// host (`pulumi-language-<runtime>`, when the engine starts one: an inline
// program runs in the bench's own process instead), the provider process
// (the dynamic provider: `pulumi-resource-pulumi-nodejs` is a shell script
// that execs node on @pulumi/pulumi's cmd/dynamic-provider, a preload before
// it; the plugin: `pulumi-resource-dmarc` execs node on the package's
// dist/plugin/main.js, or is the plugin's executable, its own node inside)
// and the emulator. A process that exits keeps the figures of its last
// sample; VmHWM is the peak resident size over the process's whole life, so
// only its last moments can escape.

export type Role = "engine" | "language" | "provider" | "emulator";
const ROLES: readonly Role[] = ["engine", "language", "provider", "emulator"];

export interface RoleUsage {
  /** Processes of this role seen during the phase. */
  processes: number;
  /** Largest VmHWM among them, in MiB. */
  peakMemoryMiB: number;
  /** User + system CPU time, summed over them. For the emulator, only what the phase added. */
  cpuSeconds: number;
  /** Bytes they caused to be written to files (write_bytes of /proc/<pid>/io). */
  bytesWritten: number;
}

/** How many unnamed processes a failure lists, and how much of each one's command line. */
const UNNAMED_LISTED = 5;
const COMMAND_SHOWN = 200;

/** Linux reports CPU times in USER_HZ, 100 on every architecture Node runs on. */
const TICKS_PER_SECOND = 100;

interface Seen {
  role: Role;
  hwmKiB: number;
  cpuTicks: number;
  bytesWritten: number;
}

interface StatLine {
  ppid: number;
  comm: string;
  cpuTicks: number;
  startTime: string;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    // The process ended between listing and reading.
    return undefined;
  }
}

function readStat(pid: number): StatLine | undefined {
  const text = readText(`/proc/${pid}/stat`);
  if (!text) return undefined;
  // comm is in parentheses and may itself hold spaces or parentheses.
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  const fields = text.slice(close + 2).split(" ");
  // Fields after comm, numbered from 3 (state) as in proc(5): ppid 4, utime 14, stime 15, starttime 22.
  const field = (n: number) => fields[n - 3] ?? "0";
  return {
    comm: text.slice(open + 1, close),
    ppid: Number(field(4)),
    cpuTicks: Number(field(14)) + Number(field(15)),
    startTime: field(22),
  };
}

function statusKiB(pid: number, key: string): number {
  const match = new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(readText(`/proc/${pid}/status`) ?? "");
  return match ? Number(match[1]) : 0;
}

function bytesWritten(pid: number): number {
  const match = /^write_bytes:\s+(\d+)/m.exec(readText(`/proc/${pid}/io`) ?? "");
  return match ? Number(match[1]) : 0;
}

/**
 * CPU seconds of every descendant of this process that has ended and been
 * waited for (cutime + cstime of /proc/self/stat): each one counted whole,
 * however short it lived, which the sampling below cannot promise.
 */
export function endedChildrenCpuSeconds(): number {
  const text = readText("/proc/self/stat") ?? "";
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  // Numbered from 3 (state) as in proc(5): cutime 16, cstime 17.
  return (Number(fields[16 - 3] ?? 0) + Number(fields[17 - 3] ?? 0)) / TICKS_PER_SECOND;
}

/** What a process runs, as its command line, cut short for a message. */
function commandLine(pid: number): string {
  return (readText(`/proc/${pid}/cmdline`) ?? "").split("\0").join(" ").trim().slice(0, COMMAND_SHOWN);
}

/** The scripts node runs as a provider process: the dynamic provider's, and the plugin's. */
const PROVIDER_SCRIPTS = ["dynamic-provider/index.js", "dist/plugin/main.js"];

/** A plugin's own executable is named as the engine looks for it: `pulumi-resource-<package>`. */
const PLUGIN_EXECUTABLE_PREFIX = "pulumi-resource-";

function executableName(pid: number): string | undefined {
  try {
    return basename(readlinkSync(`/proc/${pid}/exe`));
  } catch {
    // The process ended between listing and reading.
    return undefined;
  }
}

/**
 * A provider process, known by what it runs, not by its launcher nor by where
 * the launcher sits in the tree: node given a provider's script, or a
 * plugin's own executable. The script is looked for among all the arguments,
 * as the dynamic provider's launcher puts `--require <preload>` before it; the
 * `node -e "require.resolve(...)"` that launcher may run first to find the
 * script names no script. A shell launcher is neither until it execs node,
 * which keeps its pid: from then on the process is counted, the launcher's
 * CPU included.
 */
function isProvider(pid: number): boolean {
  const [, ...args] = (readText(`/proc/${pid}/cmdline`) ?? "").split("\0");
  if (args.some((arg) => PROVIDER_SCRIPTS.some((ending) => arg.endsWith(ending)))) return true;
  return executableName(pid)?.startsWith(PLUGIN_EXECUTABLE_PREFIX) ?? false;
}

export class ProcessSampler {
  private readonly seen = new Map<string, Seen>();
  private readonly roles = new Map<string, Role>();
  /** The phase's processes no sample could name, by key: what each runs and its CPU ticks when last seen. */
  private readonly unnamed = new Map<string, { command: string; cpuTicks: number }>();
  private timer: NodeJS.Timeout | undefined;
  private emulatorTicksAtStart = 0;
  private emulatorWrittenAtStart = 0;

  constructor(
    private readonly emulatorPid: number,
    private readonly intervalMs = 200,
  ) {}

  start(): void {
    this.seen.clear();
    this.unnamed.clear();
    const emulator = readStat(this.emulatorPid);
    this.emulatorTicksAtStart = emulator?.cpuTicks ?? 0;
    this.emulatorWrittenAtStart = bytesWritten(this.emulatorPid);
    this.sample();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
  }

  stop(): Record<Role, RoleUsage> {
    clearInterval(this.timer);
    this.timer = undefined;
    this.sample();
    const usage = {} as Record<Role, RoleUsage>;
    for (const role of ROLES) usage[role] = { processes: 0, peakMemoryMiB: 0, cpuSeconds: 0, bytesWritten: 0 };
    for (const process of this.seen.values()) {
      const total = usage[process.role];
      total.processes += 1;
      total.peakMemoryMiB = Math.max(total.peakMemoryMiB, process.hwmKiB / 1024);
      total.cpuSeconds += process.cpuTicks / TICKS_PER_SECOND;
      total.bytesWritten += process.bytesWritten;
    }
    usage.emulator.cpuSeconds -= this.emulatorTicksAtStart / TICKS_PER_SECOND;
    usage.emulator.bytesWritten -= this.emulatorWrittenAtStart;
    for (const role of ROLES) {
      // Ticks are hundredths of a second; more digits would only be float noise.
      usage[role].cpuSeconds = Math.round(usage[role].cpuSeconds * 100) / 100;
      usage[role].peakMemoryMiB = Math.round(usage[role].peakMemoryMiB * 10) / 10;
    }
    return usage;
  }

  /**
   * Fails, naming the kind, when the phase last stopped must have had a
   * process of that kind and none was measured: its figures would read 0, as
   * if it cost nothing, where the sampler did not recognise the process. The
   * message lists what the phase ran that the sampler could not name.
   */
  requireMeasured(usage: Record<Role, RoleUsage>, kinds: readonly Role[], phase: string): void {
    for (const kind of kinds) {
      const { processes, cpuSeconds } = usage[kind];
      if (processes > 0 && cpuSeconds > 0) continue;
      throw new Error(
        `${phase} must have had a ${kind} process, but the sampler measured ${processes}, with ${cpuSeconds.toFixed(2)} s of CPU, ` +
          `and a 0 would read as costing nothing. Processes it saw and could not name (bench/src/sampler.ts names them by what they run): ` +
          `${this.unnamedProcesses() || "none (so one may have started and ended between two samples)"}`,
      );
    }
  }

  /** The phase's processes that used CPU and were never named, busiest first. */
  private unnamedProcesses(): string {
    return [...this.unnamed]
      .filter(([key, process]) => !this.roles.has(key) && process.cpuTicks > 0)
      .sort(([, a], [, b]) => b.cpuTicks - a.cpuTicks)
      .slice(0, UNNAMED_LISTED)
      .map(([, process]) => `${process.command} (${(process.cpuTicks / TICKS_PER_SECOND).toFixed(2)} s)`)
      .join("; ");
  }

  private role(pid: number, stat: StatLine, key: string, parent: StatLine | undefined): Role | undefined {
    const known = this.roles.get(key);
    if (known !== undefined) return known;
    let role: Role | undefined;
    if (pid === this.emulatorPid) role = "emulator";
    // A `pulumi` whose parent is `pulumi` is the engine's child between fork and exec: a provider, soon.
    else if (stat.comm === "pulumi") role = parent?.comm === "pulumi" ? undefined : "engine";
    // comm holds 15 characters: `pulumi-language-nodejs` reads `pulumi-language`.
    else if (stat.comm.startsWith("pulumi-language")) role = "language";
    else if (isProvider(pid)) role = "provider";
    // Only a final answer is remembered: a process caught between fork and exec still looks like its parent.
    if (role) this.roles.set(key, role);
    return role;
  }

  private sample(): void {
    const stats = new Map<number, StatLine>();
    const children = new Map<number, number[]>();
    for (const entry of readdirSync("/proc")) {
      const pid = Number(entry);
      if (!Number.isInteger(pid)) continue;
      const stat = readStat(pid);
      if (!stat) continue;
      stats.set(pid, stat);
      const siblings = children.get(stat.ppid) ?? [];
      siblings.push(pid);
      children.set(stat.ppid, siblings);
    }
    // Descendants of this process only: other people's engines on the machine are not ours to count.
    const queue = [...(children.get(process.pid) ?? [])];
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      queue.push(...(children.get(next) ?? []));
      const stat = stats.get(next);
      if (!stat) continue;
      const key = `${next}:${stat.startTime}`;
      const role = this.role(next, stat, key, stats.get(stat.ppid));
      if (role) this.count(key, role, next, stat);
      else this.noteUnnamed(key, next, stat);
    }
  }

  private count(key: string, role: Role, pid: number, stat: StatLine): void {
    // Counters only grow; a process that has exited but is not yet reaped reads as zeros, which must not win.
    const before = this.seen.get(key);
    this.seen.set(key, {
      role,
      hwmKiB: Math.max(before?.hwmKiB ?? 0, statusKiB(pid, "VmHWM")),
      cpuTicks: Math.max(before?.cpuTicks ?? 0, stat.cpuTicks),
      bytesWritten: Math.max(before?.bytesWritten ?? 0, bytesWritten(pid)),
    });
  }

  private noteUnnamed(key: string, pid: number, stat: StatLine): void {
    // As in count(): an exited process not yet reaped reads as zeros, and as an empty command line.
    const before = this.unnamed.get(key);
    const command = commandLine(pid) || before?.command || stat.comm;
    this.unnamed.set(key, { command, cpuTicks: Math.max(before?.cpuTicks ?? 0, stat.cpuTicks) });
  }
}
