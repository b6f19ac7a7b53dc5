import { existsSync } from "node:fs";
import { type CheckpointFile, readJson, stateOf } from "./checkpointFile";
import type { Deployment } from "./deployment";
import { stackFiles } from "./fileBackend";
import { findCheckpointRepair } from "./repair";

// A stack of a file backend read straight from its files: what `pulumi
// stack export` and `pulumi stack tag ls` answer, without a CLI process
// each (a second or so apiece, two per stack, on every scan of a fleet).
// Only the layout with projects and uncompressed checkpoints, as the
// backend writes by default; anything else is left to the CLI.

interface TagsFile {
  version?: number;
  tags?: Record<string, string>;
}

/** The stack's state and tags; undefined when its files are not as expected, so that the CLI is asked. */
export function fileStack(
  folder: string,
  projectName: string,
  stackName: string,
): { state: Deployment; tags: Record<string, string> } | undefined {
  const [checkpoint] = stackFiles(folder, projectName, stackName).checkpoints;
  // A checkpoint the backend could not load is the CLI's to refuse, and the recovery's to repair.
  if (!checkpoint || existsSync(`${checkpoint}.gz`) || findCheckpointRepair([checkpoint])) return undefined;
  const state = stateOf(readJson<CheckpointFile>(checkpoint));
  if (!state) return undefined;
  // The backend keeps a stack's tags beside its checkpoint. None there (a stack never tagged, or a
  // backend that keeps them elsewhere) is no proof of no marks: the CLI is asked.
  const tags = readJson<TagsFile>(checkpoint.replace(/\.json$/, ".pulumi-tags"));
  return tags?.version === 1 && tags.tags ? { state, tags: tags.tags } : undefined;
}
