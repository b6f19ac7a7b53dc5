import { copyFileSync, existsSync, readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import type { Deployment } from "./deployment";

// A kill in the middle of a checkpoint write can leave the file backend's
// checkpoint cut short (on stores without atomic writes); every command then
// fails with `failed to load checkpoint`. The backend copies the previous
// checkpoint to `<stack>.json.bak` before each write: one step older, and
// that step is a pending operation recovery settles like any other.

interface CheckpointFile {
  checkpoint?: { latest?: Deployment["deployment"] };
  version?: number;
}

function parse(file: string): CheckpointFile | undefined {
  try {
    const bytes = readFileSync(file);
    const text = file.endsWith(".gz") ? gunzipSync(bytes).toString("utf8") : bytes.toString("utf8");
    return JSON.parse(text) as CheckpointFile;
  } catch {
    return undefined;
  }
}

export interface BrokenCheckpoint {
  file: string;
  backup: string;
  /** The state the backup holds, in the shape `pulumi stack export` gives. */
  previous: Deployment;
}

/** The stack's checkpoint when it cannot be read but its `.bak` can; undefined when nothing is to restore. */
export function findBrokenCheckpoint(candidates: readonly string[]): BrokenCheckpoint | undefined {
  const file = candidates.flatMap((base) => [base, `${base}.gz`]).find((candidate) => existsSync(candidate));
  if (file === undefined || parse(file) !== undefined) return undefined;
  const backup = `${file}.bak`;
  const previous = parse(backup);
  const latest = previous?.checkpoint?.latest;
  if (!latest) {
    throw new Error(`The checkpoint ${file} cannot be read and neither can ${backup}: restore the state by hand.`);
  }
  return { file, backup, previous: { version: previous.version ?? 3, deployment: latest } };
}

/** Puts the previous checkpoint back, the broken one having been copied aside by the caller. */
export function restoreCheckpoint(broken: BrokenCheckpoint): void {
  copyFileSync(broken.backup, broken.file);
}
