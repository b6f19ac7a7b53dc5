import { copyFileSync, existsSync, rmSync } from "node:fs";
import { shownPath } from "../cli/shown";
import { type CheckpointFile, readJson, stateOf } from "./checkpointFile";
import type { Deployment } from "./deployment";
import { projectStackNames, stackFiles } from "./fileBackend";

// A kill in the middle of a checkpoint write can leave the file backend
// unable to load the stack (`failed to load checkpoint: EOF`). The backend
// writes the new checkpoint to a temporary file, then its attributes to
// `<stack>.json.attrs` (not atomically), then renames the temporary file over
// the checkpoint: a kill between the two leaves the previous checkpoint whole
// and its attributes file empty. Removing that file is the repair (the
// backend reads a missing one as default attributes). On stores without
// atomic writes the checkpoint itself can be cut short: the backend copies
// the previous one to `<stack>.json.bak` before each write, and that copy is
// restored. Either way the state is one step older, and that step is a
// pending operation recovery settles like any other.

export interface CheckpointRepair {
  file: string;
  /** `attributes`: the attributes file is cut short; `content`: the checkpoint is, and its backup is restored. */
  broken: "attributes" | "content";
  /** The backup restored, for `content`. */
  backup?: string;
  /** The state the stack has once repaired, in the shape `pulumi stack export` gives. */
  state: Deployment;
}

/** What stops the backend from loading the stack's checkpoint, and its repair; undefined when it loads. */
export function findCheckpointRepair(candidates: readonly string[]): CheckpointRepair | undefined {
  const file = candidates.flatMap((base) => [base, `${base}.gz`]).find((candidate) => existsSync(candidate));
  if (file === undefined) return undefined;
  const attributes = `${file}.attrs`;
  const attributesBroken = existsSync(attributes) && readJson(attributes) === undefined;
  const current = stateOf(readJson<CheckpointFile>(file));
  if (current) return attributesBroken ? { file, broken: "attributes", state: current } : undefined;
  const backup = `${file}.bak`;
  const previous = stateOf(readJson<CheckpointFile>(backup));
  if (!previous) {
    throw new Error(
      `The checkpoint ${shownPath(file)} cannot be read and neither can ${shownPath(backup)}: restore the state by hand.`,
    );
  }
  return { file, broken: "content", backup, state: previous };
}

export function repairCheckpoint(repair: CheckpointRepair): void {
  if (repair.backup) copyFileSync(repair.backup, repair.file);
  // The attributes describe the content written last (its checksum among them), not the one now in place.
  rmSync(`${repair.file}.attrs`, { force: true });
}

/** A stack whose checkpoint file needs a repair before the backend can load it, or even list stacks. */
export interface BrokenCheckpoint {
  stackName: string;
  file: string;
}

/** The repairs the named stacks of a project in a file backend folder need. */
function repairsOf(folder: string, projectName: string, stackNames: readonly string[]) {
  return stackNames.flatMap((stackName) => {
    const repair = findCheckpointRepair(stackFiles(folder, projectName, stackName).checkpoints);
    return repair ? [{ stackName, repair }] : [];
  });
}

/** Those of the project's stacks in a file backend folder whose checkpoint is cut short (see {@link findCheckpointRepair}). */
export function brokenCheckpoints(
  folder: string,
  projectName: string,
  stackNames: readonly string[],
): BrokenCheckpoint[] {
  return repairsOf(folder, projectName, stackNames).map(({ stackName, repair }) => ({ stackName, file: repair.file }));
}

/**
 * Removes the cut-short attributes files of the project's stacks in a file
 * backend folder, each beside a whole checkpoint: the one repair that loses
 * nothing, so a command that must list the stacks before it can recover any
 * (the CLI's listing loads every checkpoint) makes it itself. Answers the
 * checkpoints repaired.
 */
export function repairCutShortAttributes(folder: string, projectName: string): string[] {
  return repairsOf(folder, projectName, projectStackNames(folder, projectName) ?? [])
    .filter(({ repair }) => repair.broken === "attributes")
    .map(({ repair }) => {
      repairCheckpoint(repair);
      return repair.file;
    });
}
