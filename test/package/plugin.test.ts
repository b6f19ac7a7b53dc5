import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundlePlugin } from "../../scripts/plugin/bundle.mjs";
import { type BuiltPlugin, buildPlugin } from "../../scripts/plugin/index.mjs";
import { archiveName, hostPlatform } from "../../scripts/plugin/platforms.mjs";
import { pluginVersion, projectRoot } from "../../scripts/project.mjs";
import { EXAMPLE_LANGUAGES, exampleIn } from "../../scripts/sdk/examples.mjs";
import { ensureSchema, REGISTRY_SCHEMA } from "../../scripts/sdk/schema.mjs";
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
  let enginePath: string;
  const stack = uniqueStackName("plugin");

  beforeAll(async () => {
    emulator = await startTestEmulator();
    work = mkdtempSync(join(tmpdir(), "dmarc plugin install "));
    const engine = await useEngine();
    enginePath = engine.PATH ?? "";
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
    "serves its schema on a PATH with no node, naming where Pulumi fetches it, with an example in five languages for every resource and function, as sdk/schema.json holds them",
    async () => {
      const { stdout } = await pulumiOk(["package", "get-schema", plugin.executable], work, env);
      const schema = JSON.parse(stdout) as {
        name: string;
        version: string;
        pluginDownloadURL: string;
        resources: Record<string, { description: string }>;
        functions: Record<string, { description: string }>;
      };
      expect(schema).toMatchObject({ name: "dmarc", version: pluginVersion(), pluginDownloadURL: RELEASE_ADDRESS });
      const members = Object.entries({ ...schema.resources, ...schema.functions });
      expect(members.length).toBeGreaterThan(10);
      const languages = EXAMPLE_LANGUAGES.map(({ language }) => language);
      for (const [token, { description }] of members)
        expect(Object.keys(exampleIn(description)?.sources ?? {}), token).toEqual(languages);
      // get-schema leaves out empty objects; the descriptions are what the examples change.
      const checkedIn = JSON.parse(readFileSync(REGISTRY_SCHEMA, "utf8"));
      const descriptions = (of: typeof schema) =>
        Object.fromEntries(Object.entries({ ...of.resources, ...of.functions }).map(([t, m]) => [t, m.description]));
      expect(descriptions(schema), "sdk/schema.json is stale: run `npm run sdk` and commit it").toEqual(
        descriptions(checkedIn),
      );
    },
    ENGINE_TIMEOUT,
  );

  it(
    "names in its schema the address its build was given, where the launcher's names the default",
    async () => {
      const mirror = "https://mirror.example/dmarc";
      const folder = join(work, "mirror build");
      mkdirSync(folder);
      writeFileSync(join(folder, "main.cjs"), await bundlePlugin((await ensureSchema(mirror)).text));
      // The bundle as the executable carries it, run by this machine's node: the address is the build's.
      writeFileSync(
        join(folder, "pulumi-resource-dmarc"),
        `#!/bin/sh\nexec node "${join(folder, "main.cjs")}" "$@"\n`,
        {
          mode: 0o755,
        },
      );
      const schemaOf = async (plugin: string) =>
        JSON.parse((await pulumiOk(["package", "get-schema", plugin], work, { ...env, PATH: enginePath })).stdout);
      expect((await schemaOf(join(folder, "pulumi-resource-dmarc"))).pluginDownloadURL).toBe(mirror);
      const launcher = join(projectRoot, "provider", "bin", "pulumi-resource-dmarc");
      expect((await schemaOf(launcher)).pluginDownloadURL).toBe(RELEASE_ADDRESS);
    },
    ENGINE_TIMEOUT,
  );

  it("leaves out what only serializing a function needs, saying so if it is ever asked for", async () => {
    const code = await bundlePlugin((await ensureSchema(undefined)).text);
    // esbuild heads each module it bundles with its path.
    expect(code).toContain("// node_modules/@pulumi/pulumi/typescript-shim.js");
    expect(code).not.toContain("// node_modules/typescript/");
    expect(code).not.toContain("// node_modules/@npmcli/arborist/");
    expect(code).toContain("the DMARC plugin does not carry typescript");
    expect(code).toContain("the DMARC plugin does not carry @npmcli/arborist");
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
