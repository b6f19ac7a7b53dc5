// The generated SDKs (index.mjs) as the packages a release publishes, made
// once per set of SDKs (the artefact `sdk-packages`): an npm tarball, a
// Python wheel and sdist, the Go module as its tag publishes it, and a .NET
// package where `dotnet` is installed. Each carries the schema's version and
// plugin download address (package.json's `pulumi` block,
// pulumi-plugin.json), which is how a program's `pulumi install` finds the
// plugin.

import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { ensureArtefact } from "../build/artefact.mjs";
import { GO_ENV } from "../build/go.mjs";
import { ask, runProcess } from "../build/process.mjs";
import { pinnedPulumiVersion, projectRoot } from "../project.mjs";
import { ensurePythonBuild } from "../toolchains/python.mjs";

/** Where a tag publishes the Go module: the repository's folder of its module path. */
export const GO_MODULE_FOLDER = join(projectRoot, "sdk", "go", "dmarc");

const dotnetInstalled = () => ask("dotnet", ["--version"]).ok;

/**
 * Compiles the TypeScript SDK in `folder` with tsc against this repository's
 * node_modules; answers the path of its entry, `bin/index.js`.
 * @param {string} folder
 * @returns {Promise<string>}
 */
export async function compileNodejsSdk(folder) {
  const modules = join(folder, "node_modules");
  if (!existsSync(modules)) symlinkSync(join(projectRoot, "node_modules"), modules, "dir");
  await runProcess(join(projectRoot, "node_modules", ".bin", "tsc"), ["-p", folder], { cwd: folder });
  // The compiled SDK reads its version from a package.json beside it, as Pulumi's own SDK builds copy it.
  copyFileSync(join(folder, "package.json"), join(folder, "bin", "package.json"));
  return join(folder, "bin", "index.js");
}

/** The TypeScript SDK compiled and packed by `npm pack` into `out`; answers the tarball's path. */
async function packNodejsSdk(folder, out) {
  await compileNodejsSdk(folder);
  // Published from bin/, as Pulumi's providers publish theirs: the compiled modules at the package's root.
  copyFileSync(join(folder, "README.md"), join(folder, "bin", "README.md"));
  const packed = JSON.parse(
    await runProcess("npm", ["pack", "--json", "--pack-destination", out], { cwd: join(folder, "bin") }),
  );
  return join(out, packed[0].filename);
}

/** The Python SDK's wheel and sdist by a PEP 517 build into `out`; answers their paths. */
async function buildPythonSdk(folder, out) {
  // setup.py reads the project's description from a README.md beside it; the generator writes it into the package.
  const packageFolder = readdirSync(folder).find((name) => existsSync(join(folder, name, "pulumi-plugin.json")));
  if (packageFolder) copyFileSync(join(folder, packageFolder, "README.md"), join(folder, "README.md"));
  const before = new Set(readdirSync(out));
  await runProcess(await ensurePythonBuild(), ["-m", "build", "--outdir", out, folder], { cwd: folder });
  const built = readdirSync(out).filter((name) => !before.has(name));
  const wheel = built.find((name) => name.endsWith(".whl"));
  const sdist = built.find((name) => name.endsWith(".tar.gz"));
  if (!wheel || !sdist) throw new Error(`python -m build wrote ${built.join(", ") || "nothing"} into ${out}`);
  return { wheel: join(out, wheel), sdist: join(out, sdist) };
}

/**
 * The generated Go package (`<folder>/dmarc`) as a module of its own in
 * `target`: go.mod names the schema's import path, so the tag
 * `sdk/go/dmarc/v<version>` publishes it, on the engine's sdk/v3, and
 * go.sum comes from `go mod tidy`.
 */
async function writeGoModule(folder, schemaFile, target) {
  const modulePath = JSON.parse(readFileSync(schemaFile, "utf8")).language.go.importBasePath;
  mkdirSync(target, { recursive: true });
  cpSync(join(folder, "dmarc"), target, { recursive: true });
  copyFileSync(join(folder, ".gitattributes"), join(target, ".gitattributes"));
  const sdk = `github.com/pulumi/pulumi/sdk/v3 v${pinnedPulumiVersion()}`;
  writeFileSync(join(target, "go.mod"), `module ${modulePath}\n\ngo 1.25\n\nrequire ${sdk}\n`);
  await runProcess("go", ["mod", "tidy"], { cwd: target, env: GO_ENV });
  return target;
}

/** The .NET package by `dotnet pack` into `out`; answers its path. */
async function packDotnetSdk(folder, out) {
  const before = new Set(readdirSync(out));
  await runProcess("dotnet", ["pack", folder, "--configuration", "Release", "--output", out], { cwd: folder });
  const nupkg = readdirSync(out).find((name) => !before.has(name) && name.endsWith(".nupkg"));
  return nupkg && join(out, nupkg);
}

/**
 * The packages of the SDKs in `sdks` (by language, artefacts of the schema
 * file `schemaFile`), made once; answers each package's path (`nupkg` only
 * where `dotnet` is installed) and the Go module's folder.
 * @param {string} schemaFile
 * @param {Record<string, string>} sdks
 * @returns {Promise<{ npm: string, wheel: string, sdist: string, goModule: string, nupkg?: string }>}
 */
export async function ensurePackages(schemaFile, sdks) {
  const dotnet = dotnetInstalled();
  const inputs = { schemaFile, sdks, pulumi: pinnedPulumiVersion(), dotnet };
  const { folder, manifest } = await ensureArtefact("sdk-packages", inputs, async (work, scratch) => {
    for (const [language, sdk] of Object.entries(sdks)) cpSync(sdk, join(scratch, language), { recursive: true });
    const packages = join(work, "packages");
    mkdirSync(packages);
    const { wheel, sdist } = await buildPythonSdk(join(scratch, "python"), packages);
    const made = {
      npm: await packNodejsSdk(join(scratch, "nodejs"), packages),
      wheel,
      sdist,
      goModule: await writeGoModule(join(scratch, "go"), schemaFile, join(work, "go")),
      nupkg: dotnet ? await packDotnetSdk(join(scratch, "dotnet"), packages) : undefined,
    };
    return {
      files: Object.fromEntries(Object.entries(made).map(([kind, path]) => [kind, path?.slice(work.length + 1)])),
    };
  });
  return /** @type {{ npm: string, wheel: string, sdist: string, goModule: string, nupkg?: string }} */ (
    Object.fromEntries(
      Object.entries(manifest.files).map(([kind, path]) => [kind, path === undefined ? undefined : join(folder, path)]),
    )
  );
}
