import { join, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as pulumi from "@pulumi/pulumi";

/**
 * Pulumi's SDK records with every resource the stack of the call that
 * declared it (`sourcePosition` and `stackTrace` in the checkpoint): every
 * frame, the SDK's and Node's own included, in a checkpoint the engine
 * rewrites after every step, and `sourcePosition`, the first frame, points at
 * our resource class rather than at the program. Our resources record the
 * partner's frames only: the line that declared the resource (or the Tenant
 * holding it) first, then its callers, at most {@link PROGRAM_FRAMES}; none of
 * this package's own, so a fleet's shard, whose program is ours, records none.
 */
const PROGRAM_FRAMES = 4;

/** Frames read from the stack: enough to get past the SDK's and ours to the program's. */
const SCANNED_FRAMES = 32;

/** The package's root: its files, built or (through a source map) their sources, are not the program. */
const PACKAGE_ROOT = join(__dirname, "..", "..", sep);
/** Pulumi's packages, their built files or (through their source maps) their sources. */
const SDK_PATH = `${sep}node_modules${sep}@pulumi${sep}`;

function isProgramFile(file: string): boolean {
  if (file.startsWith("node:") || file.includes(SDK_PATH)) return false;
  return !(file.startsWith("file://") ? fileURLToPath(file) : file).startsWith(PACKAGE_ROOT);
}

/** A frame, `at <name> (<file>:<line>:<column>)`, or `at <file>:<line>:<column>` for an anonymous function. */
const FRAME = /^\s*at (?:.* \()?(?<file>[^()]+):(?<line>[0-9]+):(?<column>[0-9]+)\)?$/;

interface SourcePosition {
  uri: string;
  line: number;
  column: number;
}

function programFrames(): SourcePosition[] {
  const limit = Error.stackTraceLimit;
  let stack: string | undefined;
  try {
    Error.stackTraceLimit = SCANNED_FRAMES;
    stack = new Error().stack;
  } finally {
    Error.stackTraceLimit = limit;
  }
  const frames: SourcePosition[] = [];
  for (const text of stack?.split("\n").slice(1) ?? []) {
    const { file, line, column } = FRAME.exec(text)?.groups ?? {};
    if (!file || !line || !column || !isProgramFile(file)) continue;
    const uri = file.startsWith("file://") ? file : pathToFileURL(file).toString();
    frames.push({ uri, line: Number(line), column: Number(column) });
    if (frames.length === PROGRAM_FRAMES) break;
  }
  return frames;
}

interface StackTracing {
  stackTrace?: (skip: number) => (SourcePosition | undefined)[];
}

/**
 * Makes the SDK record {@link programFrames} for the resource (custom or
 * component) whose constructor runs until the returned function is called.
 * The SDK reads the trace synchronously in `Resource`'s constructor, through
 * its static `stackTrace`; where a version of the SDK has no such method,
 * nothing is changed and it records its own trace.
 */
export function recordProgramFrames(): () => void {
  const sdk = pulumi.Resource as unknown as StackTracing;
  const own = sdk.stackTrace;
  if (typeof own !== "function") return () => undefined;
  sdk.stackTrace = programFrames;
  return () => {
    sdk.stackTrace = own;
  };
}
