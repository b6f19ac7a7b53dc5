import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { LocalWorkspace } from "@pulumi/pulumi/automation";
import { beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { projectRoot } from "../../scripts/project.mjs";
import { startCommand } from "../reliability/harness";
import { useEngine } from "../support/engine";
import { fleetProjectFolder, tenant, uniqueFleetName } from "./support";

// A run killed while the backend wrote a checkpoint's attributes leaves that
// file empty, and the CLI's stack listing, which loads every checkpoint of
// the project, fails on it ("error: EOF"). dmarc-fleet lists the stacks to
// find the selected one before its scan could recover any shard, so it makes
// that lossless repair itself, in a project of its own here: another test's
// run writing a checkpoint of a shared project would fail the listing too.

const CLI = join(projectRoot, "provider", "bin", "dmarc-fleet.js");

beforeAll(async () => {
  await useEngine();
}, 600_000);

describe("dmarc-fleet, after a kill cut a shard's attributes file short", () => {
  it("removes the empty attributes file, says so, and reads the fleet", async () => {
    const projectName = `dmarc-fleet-cut-${process.pid}`;
    const project = fleetProjectFolder(projectName);
    writeFileSync(join(project, "Pulumi.yaml"), `name: ${projectName}\nruntime: nodejs\n`);
    writeFileSync(join(project, "tenants.yaml"), stringify({ tenants: [tenant("sierra", { domains: [] })] }));
    const fleet = uniqueFleetName("cut");
    const shard = `${fleet}-001`;
    const workspace = await LocalWorkspace.create({ workDir: project });
    await workspace.createStack(shard);
    const backend = fileURLToPath(process.env.PULUMI_BACKEND_URL ?? "");
    const attributes = join(backend, ".pulumi", "stacks", projectName, `${shard}.json.attrs`);
    expect(existsSync(attributes)).toBe(true);
    writeFileSync(attributes, "");
    try {
      const status = await startCommand(process.execPath, [CLI, "status", "--json", "--fleet", fleet], project, {})
        .done;
      expect(status.code, status.stderr).toBe(0);
      expect(status.stderr).toContain(
        `${shard}.json: a killed run cut its attributes file short; removed it, the checkpoint is whole`,
      );
      expect(existsSync(attributes)).toBe(false);
      const { shards } = JSON.parse(status.stdout) as { shards: { name: string; exists: boolean }[] };
      expect(shards).toMatchObject([{ name: shard, exists: true }]);
    } finally {
      await workspace.removeStack(shard);
    }
  }, 240_000);
});
