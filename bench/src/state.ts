import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";

export interface StateFootprint {
  /** The checkpoint file as the file backend stores it. */
  checkpointBytes: number;
  /** Resources in the checkpoint, the stack and the provider resource included. */
  resourcesInCheckpoint: number;
  /** checkpointBytes over the fleet's resources. */
  bytesPerResource: number;
  /** Bytes of `__provider` values (inputs and outputs, as serialized JSON) over the fleet's resources. */
  providerBytesPerResource: number;
}

interface CheckpointResource {
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
}

/**
 * Where the file backend keeps a stack's checkpoint: `<backend>/.pulumi/stacks/<project>/<stack>.json`,
 * gzipped when PULUMI_DIY_BACKEND_GZIP is set. Undefined for other backends.
 */
function checkpointPath(backendUrl: string, project: string, stack: string): string | undefined {
  if (!backendUrl.startsWith("file://")) return undefined;
  const base = join(fileURLToPath(backendUrl), ".pulumi", "stacks", project, `${stack}.json`);
  return [base, `${base}.gz`].find((path) => existsSync(path));
}

export function stateFootprint(
  backendUrl: string,
  project: string,
  stack: string,
  fleetResources: number,
): StateFootprint | undefined {
  return stacksFootprint(backendUrl, project, [stack], fleetResources);
}

/** The checkpoints of several stacks together (a fleet's shards), over the resources they hold between them. */
export function stacksFootprint(
  backendUrl: string,
  project: string,
  stacks: readonly string[],
  fleetResources: number,
): StateFootprint | undefined {
  let checkpointBytes = 0;
  let resourcesInCheckpoint = 0;
  let providerBytes = 0;
  for (const stack of stacks) {
    const path = checkpointPath(backendUrl, project, stack);
    if (!path) return undefined;
    const raw = readFileSync(path);
    const text = (path.endsWith(".gz") ? gunzipSync(raw) : raw).toString("utf8");
    const checkpoint = JSON.parse(text) as { checkpoint?: { latest?: { resources?: CheckpointResource[] } } };
    const resources = checkpoint.checkpoint?.latest?.resources ?? [];
    checkpointBytes += raw.length;
    resourcesInCheckpoint += resources.length;
    for (const resource of resources) {
      for (const props of [resource.inputs, resource.outputs]) {
        const provider = props?.__provider;
        if (provider !== undefined) providerBytes += Buffer.byteLength(JSON.stringify(provider));
      }
    }
  }
  return {
    checkpointBytes,
    resourcesInCheckpoint,
    bytesPerResource: checkpointBytes / fleetResources,
    providerBytesPerResource: providerBytes / fleetResources,
  };
}
