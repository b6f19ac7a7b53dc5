import { execFile, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { PLUGIN_DOWNLOAD_URL } from "../../provider/src/plugin/schema";
import { runProcess } from "../../scripts/build/process.mjs";
import { writeVerifyProject } from "../../scripts/plugin/verify-release.mjs";
import { pinnedPulumiVersion, projectRoot } from "../../scripts/project.mjs";
import { generateSdks, packageSdks } from "../../scripts/sdk/index.mjs";
import { GO_MODULE_FOLDER } from "../../scripts/sdk/packages.mjs";
import { useEngine } from "../support/engine";
import { listenOnLoopback } from "../support/loopback";

// The packages a release publishes (npm run sdk), each installed or built
// where a partner's program would get it: the npm tarball into a fresh
// project, the wheel into a fresh virtual environment, the Go module from
// its own folder. Each names the plugin's version and download address, by
// which a program's `pulumi install` fetches the plugin; a Pulumi YAML
// program names it by the package declaration the Languages page shows.

const TIMEOUT = 600_000;
/** The release archive's platform part for this machine, as Pulumi names it. */
const PLATFORM = `${process.platform}-${process.arch === "x64" ? "amd64" : process.arch}`;
const { version } = JSON.parse(readFileSync(join(projectRoot, "provider", "package.json"), "utf8"));

/** The package declaration of docs/guides/languages.md, as a YAML program's folder holds it. */
function documentedYamlDeclaration(): string {
  const page = readFileSync(join(projectRoot, "docs", "guides", "languages.md"), "utf8");
  const block = /```yaml\n(packageDeclarationVersion: 1\n[^`]*)```/.exec(page)?.[1];
  if (!block) throw new Error("docs/guides/languages.md shows no package declaration");
  return block;
}

/** A tar.gz holding `pulumi-resource-dmarc` at its root, as the release's archives do. */
async function pluginArchive(folder: string): Promise<Buffer> {
  const content = join(folder, "content");
  mkdirSync(content, { recursive: true });
  writeFileSync(join(content, "pulumi-resource-dmarc"), "#!/bin/sh\nexit 1\n");
  chmodSync(join(content, "pulumi-resource-dmarc"), 0o755);
  await runProcess("tar", ["czf", join(folder, "archive.tar.gz"), "-C", content, "."], { cwd: folder });
  return readFileSync(join(folder, "archive.tar.gz"));
}

/** Every file under `folder`, by its path inside it, with its text. */
function filesOf(folder: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(folder, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files[relative(folder, path)] = readFileSync(path, "utf8");
  }
  return files;
}

describe("the SDK packages a release publishes", () => {
  let work: string;
  let packages: Awaited<ReturnType<typeof packageSdks>>;
  let sdks: Record<string, string>;
  let manifest: { resource: boolean; name: string; version: string; server: string };

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "dmarc-packages-"));
    sdks = await generateSdks(join(work, "sdk"));
    packages = await packageSdks(join(work, "sdk"), join(work, "go-module"));
    manifest = { resource: true, name: "dmarc", version, server: PLUGIN_DOWNLOAD_URL };
  }, TIMEOUT);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("each names the plugin's version, the provider's, and the releases Pulumi fetches it from", async () => {
    expect(JSON.parse(readFileSync(join(work, "sdk", "schema.json"), "utf8")).pluginDownloadURL).toBe(
      PLUGIN_DOWNLOAD_URL,
    );
    const unpacked = join(work, "npm-unpacked");
    mkdirSync(unpacked);
    await runProcess("tar", ["xzf", packages.npm, "-C", unpacked], { cwd: work });
    const packageJson = JSON.parse(readFileSync(join(unpacked, "package", "package.json"), "utf8"));
    expect(packageJson).toMatchObject({ name: "@dmarc-partner/pulumi-dmarc", version, pulumi: manifest });
    // npm's provenance accepts a package only from the repository it names.
    expect(packageJson.repository).toBe("https://github.com/dmarc-partner/pulumi-dmarc");
    const sdist = await runProcess("tar", ["tzf", packages.sdist], { cwd: work });
    expect(sdist).toContain(`pulumi_dmarc-${version}/pulumi_dmarc/pulumi-plugin.json`);
    expect(JSON.parse(readFileSync(join(GO_MODULE_FOLDER, "pulumi-plugin.json"), "utf8"))).toEqual(manifest);
    expect(JSON.parse(readFileSync(join(sdks.dotnet as string, "pulumi-plugin.json"), "utf8"))).toEqual(manifest);
    expect(readFileSync(join(sdks.dotnet as string, "DmarcPartner.Dmarc.csproj"), "utf8")).toContain(
      `<Version>${version}</Version>`,
    );
    // A .nupkg only where dotnet is installed; the project above is what it packs.
    const dotnetInstalled = spawnSync("dotnet", ["--version"]).status === 0;
    expect(packages.nupkg !== undefined).toBe(dotnetInstalled);
  });

  it(
    "npm: the tarball installs into a fresh project (the release's verification project), which compiles against it and loads it",
    async () => {
      const project = join(work, "npm-project");
      const files = writeVerifyProject("nodejs", project, version, packages);
      const manifest = JSON.parse(files["package.json"] ?? "{}");
      expect(manifest.dependencies["@dmarc-partner/pulumi-dmarc"]).toBe(`file:${packages.npm}`);
      // From npm's cache, as the suite's other projects: the pinned @pulumi/pulumi, and the repository's compiler.
      manifest.dependencies["@pulumi/pulumi"] = pinnedPulumiVersion();
      delete manifest.devDependencies;
      writeFileSync(join(project, "package.json"), JSON.stringify(manifest));
      await runProcess("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline"], { cwd: project });
      // Beside the verification's program (the index page's example), one that exports what it declares, to load.
      writeFileSync(
        join(project, "declared.ts"),
        [
          'import * as dmarc from "@dmarc-partner/pulumi-dmarc";',
          'const args: dmarc.OrganizationArgs = { name: "Acme Corp" };',
          "export const declared = [args, dmarc.Organization, dmarc.Domain, dmarc.getPriceIdOutput];",
          "",
        ].join("\n"),
      );
      const tsconfig = JSON.parse(files["tsconfig.json"] ?? "{}");
      writeFileSync(
        join(project, "tsconfig.json"),
        JSON.stringify({ ...tsconfig, files: ["index.ts", "declared.ts"] }),
      );
      await runProcess(join(projectRoot, "node_modules", ".bin", "tsc"), ["-p", "."], { cwd: project });
      const loaded = await runProcess(
        process.execPath,
        ["-e", 'const m = require("./bin/declared.js"); console.log(m.declared.length, m.declared[1].name)'],
        { cwd: project },
      );
      expect(loaded.trim()).toBe("4 Organization");
    },
    TIMEOUT,
  );

  it(
    "Python: the wheel installs into a fresh virtual environment, with its plugin manifest",
    async () => {
      const venv = join(work, "venv");
      await runProcess("python3", ["-m", "venv", venv], { cwd: work });
      const python = join(venv, "bin", "python");
      const pulumi = `pulumi==${pinnedPulumiVersion()}`;
      await runProcess(python, ["-m", "pip", "install", "--quiet", packages.wheel, pulumi], { cwd: work });
      const script = [
        "import json, importlib.resources, pulumi_dmarc",
        "manifest = json.loads(importlib.resources.files('pulumi_dmarc').joinpath('pulumi-plugin.json').read_text())",
        "print(json.dumps({'manifest': manifest, 'names': sorted(n for n in dir(pulumi_dmarc) if n[0].isupper())}))",
      ].join("\n");
      const { manifest: installed, names } = JSON.parse(await runProcess(python, ["-c", script], { cwd: work }));
      expect(installed).toEqual(manifest);
      expect(names).toEqual(expect.arrayContaining(["Organization", "Domain", "DomainVerification", "Tenant"]));
    },
    TIMEOUT,
  );

  it(
    "Go: the module checked in at sdk/go/dmarc is the one the schema makes now, and builds from its own folder",
    async () => {
      const made = filesOf(join(work, "go-module"));
      const checkedIn = filesOf(GO_MODULE_FOLDER);
      const stale = Object.keys({ ...made, ...checkedIn }).filter((file) => made[file] !== checkedIn[file]);
      expect(stale, "sdk/go/dmarc is stale: run `npm run sdk` and commit it").toEqual([]);
      const env = { GOTOOLCHAIN: "local", GOFLAGS: "-mod=readonly" };
      expect((await runProcess("go", ["list", "-m"], { cwd: GO_MODULE_FOLDER, env })).trim()).toBe(
        "github.com/dmarc-partner/pulumi-dmarc/sdk/go/dmarc",
      );
      expect(readFileSync(join(GO_MODULE_FOLDER, "go.mod"), "utf8")).toContain(
        `github.com/pulumi/pulumi/sdk/v3 v${pinnedPulumiVersion()}`,
      );
      await runProcess("go", ["build", "./..."], { cwd: GO_MODULE_FOLDER, env });
    },
    TIMEOUT,
  );

  it(
    "the release's verification projects in the other languages, here on these packages: Python compiles, Go vets; C# and YAML name the package and the program",
    async () => {
      const folder = (language: string) => join(work, "verify", language);
      const python = writeVerifyProject("python", folder("python"), version, packages);
      expect(python["requirements.txt"]).toContain(packages.wheel);
      await runProcess("python3", ["-m", "py_compile", "__main__.py"], { cwd: folder("python") });

      const go = writeVerifyProject("go", folder("go"), version, { goModule: GO_MODULE_FOLDER });
      expect(go["go.mod"]).toContain(`require github.com/dmarc-partner/pulumi-dmarc/sdk/go/dmarc v${version}`);
      const env = { GOTOOLCHAIN: "local", GOFLAGS: "-mod=mod" };
      await runProcess("go", ["mod", "tidy"], { cwd: folder("go"), env });
      await runProcess("go", ["vet", "."], { cwd: folder("go"), env });

      const dotnet = writeVerifyProject("dotnet", folder("dotnet"), version);
      expect(dotnet["verify-release.csproj"]).toContain(
        `<PackageReference Include="DmarcPartner.Dmarc" Version="${version}" />`,
      );
      expect(dotnet["Program.cs"]).toContain("new Dmarc.Domain(");
      const yaml = parse(writeVerifyProject("yaml", folder("yaml"), version)["Pulumi.yaml"] ?? "");
      expect(yaml).toMatchObject({ name: "verify-release", runtime: "yaml", outputs: { record: expect.any(String) } });
    },
    TIMEOUT,
  );

  it(
    "YAML: the Languages page's package declaration has `pulumi install` fetch the plugin from its download address",
    async () => {
      const env = await useEngine();
      const archiveName = `pulumi-resource-dmarc-v${version}-${PLATFORM}.tar.gz`;
      const archive = await pluginArchive(join(work, "yaml-archive"));
      const requested: string[] = [];
      const server = createServer((request, response) => {
        requested.push(request.url ?? "");
        if (request.url === `/releases/${archiveName}`) response.end(archive);
        else response.writeHead(404).end();
      });
      const releases = await listenOnLoopback(server);
      try {
        const project = join(work, "yaml-project");
        const home = join(work, "yaml-pulumi-home");
        mkdirSync(project);
        mkdirSync(home);
        writeFileSync(
          join(project, "Pulumi.yaml"),
          "name: declared\nruntime: yaml\nresources:\n  acme:\n    type: dmarc:index:Organization\n    properties:\n      name: Acme\n",
        );
        writeFileSync(join(project, "dmarc.yaml"), documentedYamlDeclaration());
        const installEnv = {
          ...env,
          PULUMI_HOME: home,
          // The release's address, answered by the loopback server.
          PULUMI_PLUGIN_DOWNLOAD_URL_OVERRIDES: `^${manifest.server}=${releases.url}/releases`,
        };
        // Asynchronously: the loopback server answers from this process.
        await promisify(execFile)("pulumi", ["install"], { cwd: project, env: { ...process.env, ...installEnv } });
        expect(requested).toEqual([`/releases/${archiveName}`]);
        const plugins = JSON.parse(
          await runProcess("pulumi", ["plugin", "ls", "--json"], { cwd: project, env: installEnv }),
        );
        expect(plugins).toEqual([expect.objectContaining({ name: "dmarc", kind: "resource", version })]);
      } finally {
        await releases.close();
      }
    },
    TIMEOUT,
  );
});
