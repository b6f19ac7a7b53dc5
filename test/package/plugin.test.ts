import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  archiveName,
  type BuiltPlugin,
  buildPlugin,
  hostPlatform,
  pluginVersion,
} from "../../scripts/plugin-archive.mjs";
import { pulumiOk } from "../reliability/harness";
import { type EmulatorHandle, partnerClient, startTestEmulator } from "../support/emulator";
import { uniqueStackName, useEngine } from "../support/engine";
import { pathWithoutNode, RELEASE_ADDRESS } from "../support/pluginRelease";

// The plugin as an air-gapped site installs it: this platform's archive of
// `npm run plugin` (the executable that carries its runtime), installed with
// `pulumi plugin install --file` into a Pulumi home of its own on a PATH
// with no `node`, then found by the engine for a Pulumi YAML project that
// names no plugin folder, in a folder outside the repository (no
// node_modules anywhere above it).

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
  let plugin: BuiltPlugin;
  const stack = uniqueStackName("plugin");

  beforeAll(async () => {
    emulator = await startTestEmulator();
    work = mkdtempSync(join(tmpdir(), "dmarc plugin install "));
    const engine = await useEngine();
    env = {
      ...engine,
      PATH: pathWithoutNode(work, engine.PATH ?? ""),
      PULUMI_HOME: join(work, "pulumi home"),
      PULUMI_BACKEND_URL: `file://${join(work, "state")}`,
    };
    mkdirSync(join(work, "state"));
    plugin = await buildPlugin();
    await pulumiOk(["plugin", "install", "resource", "dmarc", pluginVersion(), "--file", plugin.archive], work, env);
  }, ENGINE_TIMEOUT);

  afterAll(async () => {
    await emulator?.emulator.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("is named as Pulumi downloads it, and its executable carries its runtime", () => {
    expect(basename(plugin.archive)).toBe(archiveName(hostPlatform() ?? "", pluginVersion()));
    expect(spawnSync("/bin/sh", ["-c", "command -v node"], { env: { PATH: env.PATH } }).status).not.toBe(0);
  });

  it(
    "serves its schema on a PATH with no node, naming where Pulumi fetches it",
    async () => {
      const { stdout } = await pulumiOk(["package", "get-schema", plugin.executable], work, env);
      const schema = JSON.parse(stdout) as { name: string; version: string; pluginDownloadURL: string };
      expect(schema).toMatchObject({ name: "dmarc", version: pluginVersion(), pluginDownloadURL: RELEASE_ADDRESS });
    },
    ENGINE_TIMEOUT,
  );

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
