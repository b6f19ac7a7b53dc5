// The generated SDKs (scripts/sdk.mjs) as the packages a release publishes:
// an npm tarball, a Python wheel and sdist, the Go module as its tag
// publishes it, and a .NET package where `dotnet` is installed. Each carries
// the schema's version and plugin download address (package.json's `pulumi`
// block, pulumi-plugin.json), which is how a program's `pulumi install`
// finds the plugin.

import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pinnedPulumiVersion, projectRoot } from "./engine.mjs";

/** PyPI's `build` (the PEP 517 front end), in a virtual environment of this project's own. */
const PYTHON_BUILD_VERSION = "1.6.1";
const pythonBuildVenv = join(projectRoot, ".cache", "python-build");

/** Where a tag publishes the Go module: the repository's folder of its module path. */
export const GO_MODULE_FOLDER = join(projectRoot, "sdk", "go", "dmarc");

/** The Go toolchain kept to this machine's and to the module proxy. */
const goEnv = { ...process.env, GOTOOLCHAIN: "local", GOFLAGS: "-mod=mod" };

function run(command, args, cwd, env = process.env) {
  try {
    return execFileSync(command, args, { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (error) {
    throw new Error(
      `${command} ${args.join(" ")} in ${cwd} failed: ${error.message}\n${error.stdout}\n${error.stderr}`,
    );
  }
}

/** The TypeScript SDK, compiled into its bin/ (compileNodejsSdk), packed by `npm pack` into `out`; answers the tarball's path. */
export function packNodejsSdk(folder, out) {
  // Published from bin/, as Pulumi's providers publish theirs: the compiled modules at the package's root.
  copyFileSync(join(folder, "README.md"), join(folder, "bin", "README.md"));
  const packed = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", out], join(folder, "bin")));
  return join(out, packed[0].filename);
}

function pythonBuild() {
  const python = join(pythonBuildVenv, "bin", "python");
  const probe = spawnSync(python, ["-c", "import importlib.metadata as m; print(m.version('build'))"], {
    encoding: "utf8",
  });
  if (probe.stdout?.trim() === PYTHON_BUILD_VERSION) return python;
  rmSync(pythonBuildVenv, { recursive: true, force: true });
  run("python3", ["-m", "venv", pythonBuildVenv], projectRoot);
  run(python, ["-m", "pip", "install", "--quiet", `build==${PYTHON_BUILD_VERSION}`], projectRoot);
  return python;
}

/** The Python SDK's wheel and sdist by a PEP 517 build into `out`; answers their paths. */
export function buildPythonSdk(folder, out) {
  // setup.py reads the project's description from a README.md beside it; the generator writes it into the package.
  const packageFolder = readdirSync(folder).find((name) => existsSync(join(folder, name, "pulumi-plugin.json")));
  if (packageFolder) copyFileSync(join(folder, packageFolder, "README.md"), join(folder, "README.md"));
  const before = new Set(existsSync(out) ? readdirSync(out) : []);
  run(pythonBuild(), ["-m", "build", "--outdir", out, folder], folder);
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
export function writeGoModule(folder, schemaFile, target = GO_MODULE_FOLDER) {
  const modulePath = JSON.parse(readFileSync(schemaFile, "utf8")).language.go.importBasePath;
  rmSync(target, { recursive: true, force: true });
  mkdirSync(target, { recursive: true });
  cpSync(join(folder, "dmarc"), target, { recursive: true });
  copyFileSync(join(folder, ".gitattributes"), join(target, ".gitattributes"));
  const sdk = `github.com/pulumi/pulumi/sdk/v3 v${pinnedPulumiVersion()}`;
  writeFileSync(join(target, "go.mod"), `module ${modulePath}\n\ngo 1.25\n\nrequire ${sdk}\n`);
  run("go", ["mod", "tidy"], target, goEnv);
  return target;
}

/** The .NET package by `dotnet pack` into `out`, where `dotnet` is installed; answers its path, or undefined. */
export function packDotnetSdk(folder, out) {
  if (spawnSync("dotnet", ["--version"]).status !== 0) return undefined;
  const before = new Set(existsSync(out) ? readdirSync(out) : []);
  run("dotnet", ["pack", folder, "--configuration", "Release", "--output", out], folder);
  const nupkg = readdirSync(out).find((name) => !before.has(name) && name.endsWith(".nupkg"));
  return nupkg && join(out, nupkg);
}
