import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import type { Deployment } from "./deployment";

// A file backend's checkpoint file as it is on disk: the state under
// `checkpoint.latest`, in the shape `pulumi stack export` gives once read.

export interface CheckpointFile {
  checkpoint?: { latest?: Deployment["deployment"] };
  version?: number;
}

/** A JSON file's content (gunzipped for `.gz`); undefined when it is missing, cut short or not JSON. */
export function readJson<T>(file: string): T | undefined {
  try {
    const bytes = readFileSync(file);
    return JSON.parse(file.endsWith(".gz") ? gunzipSync(bytes).toString("utf8") : bytes.toString("utf8")) as T;
  } catch {
    return undefined;
  }
}

/** The state a checkpoint file holds, as `pulumi stack export` gives it; undefined for a stack with none yet. */
export function stateOf(checkpoint: CheckpointFile | undefined): Deployment | undefined {
  const latest = checkpoint?.checkpoint?.latest;
  return latest && { version: checkpoint?.version ?? 3, deployment: latest };
}
