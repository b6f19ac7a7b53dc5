// Tells, from a failed command's error or output, that an interrupted run
// left the stack behind, and says what to run. For scripts and runners that
// drive `pulumi` (the Automation API's errors carry the CLI's output). The
// one table of the engine's texts that mean "interrupted": the fleet runner
// and `dmarc-recover` read them from here.

export type InterruptionSign = "locked" | "updateInProgress" | "brokenCheckpoint" | "pendingOperations";

const SIGNS: readonly { sign: InterruptionSign; pattern: RegExp; left: string }[] = [
  { sign: "locked", pattern: /the stack is currently locked by \d+ lock/i, left: "its lock" },
  {
    sign: "updateInProgress",
    pattern: /Another update is currently in progress/i,
    left: "an update marked as running",
  },
  { sign: "brokenCheckpoint", pattern: /failed to load checkpoint/i, left: "a checkpoint cut short" },
  {
    sign: "pendingOperations",
    pattern: /pending operations? from previous deployment|interrupted while (creating|updating|deleting)/i,
    left: "pending operations",
  },
];

function textOf(error: unknown): string {
  if (typeof error === "string") return error;
  if (error instanceof Error) return `${error.message}\n${textOf(error.cause)}`;
  return "";
}

/** The first line of `error` (an Error or a command's output) that shows `sign`, trimmed; undefined when none does. */
export function signLine(error: unknown, sign: InterruptionSign): string | undefined {
  const pattern = SIGNS.find((entry) => entry.sign === sign)?.pattern;
  return textOf(error)
    .split("\n")
    .find((line) => pattern?.test(line))
    ?.trim();
}

export interface InterruptedStack {
  /** The stack, for the command line; `<stack>` when not given. */
  stackName?: string;
  /** The project folder, when the command is not run from it. */
  workDir?: string;
}

/** The command to run, when `error` (an Error or a command's output) shows an interrupted run; otherwise undefined. */
export function describeInterruption(error: unknown, stack: InterruptedStack = {}): string | undefined {
  const text = textOf(error);
  const left = SIGNS.filter((entry) => entry.pattern.test(text)).map((entry) => entry.left);
  if (left.length === 0) return undefined;
  const which = stack.stackName ? `stack ${stack.stackName}` : "the stack";
  const command = `npx dmarc-recover --stack ${stack.stackName ?? "<stack>"}${stack.workDir ? ` --cwd ${stack.workDir}` : ""}`;
  return `An interrupted pulumi run left ${which} with ${left.join(" and ")}. Once no pulumi run of it is alive, run \`${command}\`, then \`pulumi up\` (do not just rerun up: it would create again what the interrupted run created).`;
}
