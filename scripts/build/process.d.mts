export declare function runProcess(
  command: string,
  args: string[],
  options?: { what?: string; cwd?: string; env?: Record<string, string | undefined>; timeoutMs?: number; tag?: string },
): Promise<string>;
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
