import { existsSync, readdirSync, readlinkSync } from "node:fs";
import { resolve } from "node:path";
import { readTextIfAny } from "../runtime/readText";

// When only the `pulumi` process is killed, its plugins live on: the program
// and the dynamic provider finish the calls they had sent, creating objects
// after the fact. Settling before they are done would miss those objects, so
// recovery waits for them. Found through /proc (Linux); elsewhere none are seen.

export interface LeftoverProcess {
  pid: number;
  command: string;
}

// The plugins' executables, and the Node.js dynamic provider they start (which outlives its shell wrapper).
const PLUGIN = /(^|\/)pulumi-(resource|language)-[\w-]+(\s|$)|@pulumi\/pulumi\/cmd\/dynamic-provider/;

function parentOf(pid: number): number | undefined {
  const stat = readTextIfAny(`/proc/${pid}/stat`);
  return stat === undefined ? undefined : Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

function commandOf(pid: number | undefined): string {
  return pid === undefined ? "" : (readTextIfAny(`/proc/${pid}/cmdline`) ?? "").split("\0").join(" ").trim();
}

/** Whether `pid` runs under a live `pulumi` CLI (then it belongs to a run that holds its lock). */
function underLiveCli(pid: number): boolean {
  for (let current = parentOf(pid), depth = 0; current !== undefined && current > 1 && depth < 16; depth++) {
    if (/(^|\/)pulumi(\s|$)/.test(commandOf(current))) return true;
    current = parentOf(current);
  }
  return false;
}

/** Pulumi plugins working in the project folder whose `pulumi` CLI is gone. */
export function leftoverPlugins(workDir: string): LeftoverProcess[] {
  if (!existsSync("/proc/self/cwd")) return [];
  const folder = resolve(workDir);
  const found: LeftoverProcess[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const command = commandOf(pid);
    if (!PLUGIN.test(command)) continue;
    let cwd: string;
    try {
      cwd = readlinkSync(`/proc/${pid}/cwd`);
    } catch {
      continue; // gone meanwhile, or another user's
    }
    const state = readTextIfAny(`/proc/${pid}/stat`);
    const zombie = state !== undefined && state.slice(state.lastIndexOf(")") + 2, state.lastIndexOf(")") + 3) === "Z";
    if (cwd === folder && !zombie && !underLiveCli(pid)) found.push({ pid, command: command.slice(0, 120) });
  }
  return found;
}
