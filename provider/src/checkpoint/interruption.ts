import { shellWord, shownPath } from "../cli/shown";
import { type Deployment, pendingOperations } from "./deployment";

// Tells, from a failed command's error or output or from a stack's state,
// that an interrupted run left the stack behind, and says what to run. For
// scripts and runners that drive `pulumi` (the Automation API's errors carry
// the CLI's output). The one table of the engine's texts that mean
// "interrupted", and the one spelling of the recovery command: the fleet
// runner and `dmarc-recover` read them from here.

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

/** The command that recovers the stack: `npx dmarc-recover --stack <name>`, with `--cwd` when a folder is given. */
function recoverCommand(stackName: string, workDir?: string): string {
  return `npx dmarc-recover --stack ${shellWord(stackName)}${workDir ? ` --cwd ${shellWord(shownPath(workDir))}` : ""}`;
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
  const command = recoverCommand(stack.stackName ?? "<stack>", stack.workDir);
  return `An interrupted pulumi run left ${which} with ${left.join(" and ")}. Once no pulumi run of it is alive, run \`${command}\`, then \`pulumi up\` (do not just rerun up: it would create again what the interrupted run created).`;
}

/**
 * What the fleet found left behind in a shard: pending operations in its
 * state, a lock refusing a run, or a checkpoint file cut short, which keeps
 * the file backend from listing any stack.
 */
export type Interruption =
  | { kind: "pendingOperations"; operations: { type: string; urn: string }[] }
  | { kind: "locked"; message: string }
  | { kind: "brokenCheckpoint"; file: string };

/** The pending operations a killed run left in the stack's state, or undefined when there are none. */
export function interruptionOf(state: Deployment): Interruption | undefined {
  const pending = pendingOperations(state);
  if (pending.length === 0) return undefined;
  return {
    kind: "pendingOperations",
    operations: pending.map((operation) => ({ type: operation.type, urn: operation.resource.urn })),
  };
}

/** A run refused because another run holds (or a dead one left) the stack's lock. */
export function lockOf(error: unknown): Interruption | undefined {
  const line = signLine(error, "locked");
  return line ? { kind: "locked", message: line } : undefined;
}

/** How progress and the recovery hint word each interruption: the short form, and what the stack "is" or "was". */
const INTERRUPTION_WORDS: {
  [K in Interruption["kind"]]: (interruption: Extract<Interruption, { kind: K }>) => { summary: string; state: string };
} = {
  pendingOperations: ({ operations }) => ({
    summary: `${operations.length} pending operation(s)`,
    state: `was interrupted with ${operations.length} pending operation(s)`,
  }),
  locked: ({ message }) => ({ summary: `locked: ${message}`, state: `is locked (${message})` }),
  brokenCheckpoint: ({ file }) => ({
    summary: `checkpoint cut short: ${shownPath(file)}`,
    state: `has its checkpoint cut short (${shownPath(file)})`,
  }),
};

function wordsOf(interruption: Interruption): { summary: string; state: string } {
  const words = INTERRUPTION_WORDS[interruption.kind] as (given: Interruption) => { summary: string; state: string };
  return words(interruption);
}

/** One line for progress and status: `1 pending operation(s)`, or `locked: <the engine's line>`. */
export function interruptionSummary(interruption: Interruption): string {
  return wordsOf(interruption).summary;
}

/** What to tell the user when no recovery is wired in. */
export function recoveryHint(stackName: string, interruption: Interruption): string {
  return `stack ${stackName} ${wordsOf(interruption).state}: run \`${recoverCommand(stackName)}\` in its work folder, then rerun the fleet`;
}
