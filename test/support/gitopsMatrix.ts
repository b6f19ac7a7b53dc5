import { copyFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalWorkspace } from "@pulumi/pulumi/automation";
import { stringify } from "yaml";
import { fleetProjectFolder, tenant, uniqueFleetName } from "../fleet/support";
import { type CiJob, ciJob } from "./ciJob";
import type { EmulatorHandle } from "./emulator";

// The GitOps guide's pipeline, as separate CI machines run it: a
// repository (the project, tenants.yaml and the config stack's settings in
// a PostgreSQL backend), and jobs that each run `dmarc-fleet` from a copy
// of their own with their own PULUMI_HOME and temporary folder.

export interface GitopsMatrix {
  fleet: string;
  /** The shards' stack names, in order. */
  shards: string[];
  /** The tenants' keys, `Tenant <key>` in the service. */
  keys: string[];
  /** One CI job: `args` (an operation, `--shard`...) run in a fresh copy of the repository. */
  job(args: readonly string[]): CiJob;
}

export interface MatrixChoice {
  name: string;
  backendUrl: string;
  emulator: EmulatorHandle;
  tenants: number;
  shardSize: number;
  /** `dmarc:requestsPerMinute` of the config stack. */
  requestsPerMinute: number;
}

/** Writes the repository and its config stack, and gives the jobs that run from copies of it. */
export async function gitopsMatrix(choice: MatrixChoice): Promise<GitopsMatrix> {
  const fleet = uniqueFleetName(choice.name);
  const configStack = `${fleet}-config`;
  const projectName = `dmarc-fleet-${choice.name}`;
  const keys = Array.from({ length: choice.tenants }, (_, index) => `t${String(index).padStart(2, "0")}`);
  const repository = fleetProjectFolder(`${projectName}-${fleet}`);
  writeFileSync(join(repository, "Pulumi.yaml"), stringify({ name: projectName, runtime: "nodejs" }));
  writeFileSync(join(repository, "tenants.yaml"), stringify({ tenants: keys.map((key) => tenant(key)) }));
  const workspace = await LocalWorkspace.create({
    workDir: repository,
    envVars: { PULUMI_BACKEND_URL: choice.backendUrl },
  });
  await workspace.createStack(configStack);
  await workspace.setAllConfig(configStack, {
    ...choice.emulator.stackConfig,
    "dmarc:requestsPerMinute": { value: String(choice.requestsPerMinute) },
  });
  const shardCount = Math.ceil(choice.tenants / choice.shardSize);
  const shards = Array.from({ length: shardCount }, (_, index) => `${fleet}-${String(index + 1).padStart(3, "0")}`);
  let copies = 0;
  const job = (args: readonly string[]) => {
    copies += 1;
    const cwd = fleetProjectFolder(`${projectName}-${fleet}-${copies}`);
    for (const file of ["Pulumi.yaml", "tenants.yaml", `Pulumi.${configStack}.yaml`]) {
      copyFileSync(join(repository, file), join(cwd, file));
    }
    const own = mkdtempSync(join(tmpdir(), "dmarc-matrix-runner-"));
    const env = { PULUMI_HOME: join(own, "pulumi-home"), TMPDIR: own, PULUMI_BACKEND_URL: choice.backendUrl };
    const common = ["--config-stack", configStack, "--fleet", fleet, "--shard-size", String(choice.shardSize)];
    return ciJob(cwd, env, [...args, ...common]);
  };
  return { fleet, shards, keys, job };
}
