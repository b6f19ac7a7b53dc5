import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildPluginArchive, pluginVersion } from "../../scripts/plugin-archive.mjs";
import { pulumiOk } from "../reliability/harness";
import { type EmulatorHandle, partnerClient, startTestEmulator } from "../support/emulator";
import { uniqueStackName, useEngine } from "../support/engine";

// The plugin as a partner installs it: the archive `npm run plugin` writes,
// installed with `pulumi plugin install` into a Pulumi home of its own, then
// found by the engine for a Pulumi YAML project that names no plugin folder,
// in a folder outside the repository (no node_modules anywhere above it).

const ENGINE_TIMEOUT = 240_000;

const program = `name: installed-plugin
runtime: yaml
resources:
  umbrella:
    type: dmarc:index:Organization
    properties:
      name: Umbrella
`;

describe("the plugin archive, installed with pulumi plugin install", () => {
  let emulator: EmulatorHandle;
  let work: string;
  let env: Record<string, string>;
  const stack = uniqueStackName("plugin");

  beforeAll(async () => {
    emulator = await startTestEmulator();
    work = mkdtempSync(join(tmpdir(), "dmarc plugin install "));
    const engine = await useEngine();
    env = { ...engine, PULUMI_HOME: join(work, "pulumi home"), PULUMI_BACKEND_URL: `file://${join(work, "state")}` };
    mkdirSync(join(work, "state"));
    const archive = buildPluginArchive(join(work, "archive"));
    await pulumiOk(["plugin", "install", "resource", "dmarc", pluginVersion(), "--file", archive], work, env);
  }, ENGINE_TIMEOUT);

  afterAll(async () => {
    await emulator?.emulator.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("is listed by the engine as an installed resource plugin", async () => {
    const { stdout } = await pulumiOk(["plugin", "ls", "--json"], work, env);
    const plugins = JSON.parse(stdout) as { name: string; kind: string; version: string }[];
    expect(plugins).toContainEqual(
      expect.objectContaining({ name: "dmarc", kind: "resource", version: pluginVersion() }),
    );
  });

  it(
    "serves a YAML program that names no plugin folder: up, no-change preview, destroy",
    async () => {
      const project = join(work, "project");
      mkdirSync(project, { recursive: true });
      writeFileSync(join(project, "Pulumi.yaml"), program);
      const run = (args: string[]) => pulumiOk([...args, "--stack", stack], project, env);
      await pulumiOk(["stack", "init", stack], project, env);
      for (const [key, { value, secret }] of Object.entries(emulator.stackConfig))
        await run(["config", "set", ...(secret ? ["--secret"] : []), key, value]);
      await run(["up", "--yes", "--skip-preview"]);
      const client = partnerClient(emulator);
      expect((await client.listOrganizations()).map((organization) => organization.name)).toEqual(["Umbrella"]);
      await run(["preview", "--expect-no-changes"]);
      await run(["destroy", "--yes", "--skip-preview"]);
      expect(await client.listOrganizations()).toEqual([]);
    },
    ENGINE_TIMEOUT,
  );
});
