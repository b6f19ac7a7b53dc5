import { join } from "node:path";
import { type StartedProcess, startProcess } from "./processes";

// A `dmarc-fleet` command as a CI job runs it: in its own checkout, with
// its own environment, in a process group of its own so that a cancel
// kills all of it at once.

// From bench/src (the tests) and bench/dist (the bench) alike.
const CLI = join(__dirname, "..", "..", "provider", "bin", "dmarc-fleet.js");

export interface CiJob {
  child: StartedProcess["child"];
  done: Promise<{ code: number | null; stdout: string; stderr: string }>;
  /** Kills the whole job, as a cancelled CI job is: the runner, its `pulumi` processes and their plugins. */
  cancel(): Promise<void>;
}

export function ciJob(cwd: string, env: Record<string, string>, args: readonly string[]): CiJob {
  const { child } = startProcess(process.execPath, [CLI, ...args, "--cwd", cwd], { cwd, env, detached: true });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once("close", (code) => resolve({ code, stdout, stderr })),
  );
  return {
    child,
    done,
    async cancel() {
      if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, "SIGKILL");
      await done;
    },
  };
}
