import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";

// The file backend's stack lock: one JSON file per running command, holding
// the pid, user and host of the `pulumi` process that took it. A lock whose
// process is gone is what a killed run leaves behind.

export interface StackLock {
  file: string;
  pid: number;
  username: string;
  hostname: string;
  timestamp: string;
  /**
   * `alive`: a `pulumi` process with that pid runs on this host; `dead`: it
   * is gone (or the pid now belongs to another program); `unknown`: it was
   * taken on another host, which this command cannot look into.
   */
  holder: "alive" | "dead" | "unknown";
}

/** Process state from /proc (Linux); undefined where /proc does not exist. */
function procState(pid: number): { running: boolean; command: string } | undefined {
  if (!existsSync("/proc/self/stat")) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const command = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
    // The state follows the parenthesised command name; a zombie has exited already.
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return { running: state !== "Z" && state !== "X", command };
  } catch {
    return { running: false, command: "" };
  }
}

function isPulumiAlive(pid: number): boolean {
  const state = procState(pid);
  if (state) return state.running && /(^|\/)pulumi(\s|$)/.test(state.command);
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function holderOf(pid: number, host: string): StackLock["holder"] {
  if (host !== hostname()) return "unknown";
  return isPulumiAlive(pid) ? "alive" : "dead";
}

/** A lock's content as the backend writes it: its `pulumi` process, user, host and start. */
export function lockFrom(file: string, text: string): StackLock {
  const content = JSON.parse(text) as Partial<Omit<StackLock, "file" | "holder">>;
  const pid = Number(content.pid);
  const host = String(content.hostname ?? "");
  return {
    file,
    pid,
    username: String(content.username ?? ""),
    hostname: host,
    timestamp: String(content.timestamp ?? ""),
    holder: holderOf(pid, host),
  };
}

/** Every lock of the stack, from the first of `lockFolders` that has any. */
export function readLocks(lockFolders: readonly string[]): StackLock[] {
  for (const folder of lockFolders) {
    if (!existsSync(folder)) continue;
    const files = readdirSync(folder).filter((name) => name.endsWith(".json"));
    if (files.length === 0) continue;
    return files.map((name) => lockFrom(join(folder, name), readFileSync(join(folder, name), "utf8")));
  }
  return [];
}

/** Removes a lock file and the attributes file the backend keeps beside it; one already gone is fine. */
export function removeLock(lock: StackLock): void {
  rmSync(lock.file, { force: true });
  rmSync(`${lock.file}.attrs`, { force: true });
}

export function describeLock(lock: StackLock): string {
  return `pid ${lock.pid} on ${lock.hostname} (user ${lock.username}, since ${lock.timestamp})`;
}
