import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { LocalWorkspace } from "@pulumi/pulumi/automation";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { projectRoot } from "../../scripts/project.mjs";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { useEngine } from "../support/engine";
import { type RunningPostgres, startPostgres } from "../support/postgres";
import { fleetProjectFolder, organizationsByName, serviceClient, tenant, uniqueFleetName } from "./support";

// Two runners, as two CI jobs would be, each running one shard of the same
// inventory at the same time, sharing state through a real PostgreSQL
// server used as the Pulumi backend.

const run = promisify(execFile);
const CLI = join(projectRoot, "provider", "bin", "dmarc-fleet.js");

let emulator: EmulatorHandle;
let postgres: RunningPostgres;
let project: string;
const fleet = uniqueFleetName("pg");
const configStack = `${fleet}-config`;

async function fleetCli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const argv = [
    CLI,
    ...args,
    "--cwd",
    project,
    "--config-stack",
    configStack,
    "--fleet",
    fleet,
    "--shard-size",
    "2",
    "--backend",
    postgres.backendUrl,
  ];
  try {
    const { stdout, stderr } = await run(process.execPath, argv, { timeout: 540_000, maxBuffer: 16 << 20 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
  }
}

beforeAll(async () => {
  await useEngine();
  emulator = await startTestEmulator();
  postgres = await startPostgres();
  project = fleetProjectFolder(`dmarc-fleet-pg-${fleet}`);
  writeFileSync(
    join(project, "tenants.yaml"),
    stringify({ tenants: [tenant("november"), tenant("oscar"), tenant("papa"), tenant("quebec")] }),
  );
  // The project's stack whose configuration every shard takes, in the PostgreSQL backend.
  const workspace = await LocalWorkspace.create({
    workDir: project,
    envVars: { PULUMI_BACKEND_URL: postgres.backendUrl },
    projectSettings: { name: "dmarc-fleet-pg", runtime: "nodejs", backend: { url: postgres.backendUrl } },
  });
  await workspace.createStack(configStack);
  await workspace.setAllConfig(configStack, emulator.stackConfig);
}, 900_000);

afterAll(async () => {
  // No destroy: the stacks go with the backend's database, the objects with the test's emulator.
  await postgres?.stop();
  await emulator?.emulator.close();
}, 600_000);

describe("two fleet runners on one PostgreSQL backend", () => {
  it("run different shards of one inventory at the same time", async () => {
    const listed = await fleetCli("shards", "--json");
    expect(listed.code).toBe(0);
    const shards = (JSON.parse(listed.stdout) as { shards: { name: string; tenants: string[] }[] }).shards;
    expect(shards).toEqual([
      expect.objectContaining({ name: `${fleet}-001`, tenants: ["november", "oscar"] }),
      expect.objectContaining({ name: `${fleet}-002`, tenants: ["papa", "quebec"] }),
    ]);

    const [first, second] = await Promise.all(shards.map((shard) => fleetCli("up", "--shard", shard.name, "--json")));
    expect(first?.code, first?.stderr).toBe(0);
    expect(second?.code, second?.stderr).toBe(0);
    for (const [runner, shard] of [
      [first, `${fleet}-001`],
      [second, `${fleet}-002`],
    ] as const) {
      const report = JSON.parse(runner?.stdout ?? "{}") as { results: { shard: string; status: string }[] };
      expect(report.results).toEqual([expect.objectContaining({ shard, status: "done" })]);
    }

    const organizations = await organizationsByName(serviceClient(emulator));
    for (const key of ["november", "oscar", "papa", "quebec"]) expect(organizations.has(`Tenant ${key}`)).toBe(true);

    // The state is in PostgreSQL: the CLI's table holds both shards' checkpoints.
    const keys = await postgres.query("select key from pulumi_state");
    for (const shard of shards) expect(keys.some((key) => key.includes(`${shard.name}.json`))).toBe(true);

    const status = await fleetCli("status", "--json");
    const overview = JSON.parse(status.stdout) as { shards: { name: string; exists: boolean; upToDate: boolean }[] };
    expect(overview.shards).toEqual([
      expect.objectContaining({ name: `${fleet}-001`, exists: true, upToDate: true }),
      expect.objectContaining({ name: `${fleet}-002`, exists: true, upToDate: true }),
    ]);
  }, 900_000);
});
