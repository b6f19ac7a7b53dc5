import type { ChildProcess } from "node:child_process";

export declare function runProcess(
  command: string,
  args: string[],
  options?: { what?: string; cwd?: string; env?: Record<string, string | undefined>; timeoutMs?: number; tag?: string },
): Promise<string>;
export interface StartedProcess {
  child: ChildProcess;
  said(): string;
  ended: Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>;
}
export declare function startProcess(
  command: string,
  args: string[],
  options?: {
    cwd?: string;
    env?: Record<string, string | undefined>;
    ownEnv?: boolean;
    stdin?: "ignore" | "pipe";
    output?: "pipe" | "inherit" | number;
    ipc?: boolean;
    detached?: boolean;
  },
): StartedProcess;
export declare function runInTerminal(
  command: string,
  args: string[],
  options?: { cwd?: string; env?: Record<string, string | undefined> },
): Promise<number>;
export declare function ask(
  command: string,
  args: string[],
  options?: { cwd?: string; env?: Record<string, string | undefined>; input?: string },
): { ok: boolean; stdout: string; said: string };
