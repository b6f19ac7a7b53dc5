// `npm run sdk [-- <folder>]`: the plugin's schema and its SDKs for
// TypeScript, Python, Go and .NET, made by Pulumi's own code generators
// (scripts/sdk-gen, built by engine.mjs) from the schema of the built
// provider: <folder>/schema.json and <folder>/<language>/ (default
// .cache/sdk/), and the packages a release publishes in <folder>/packages/
// (scripts/sdk-packages.mjs). Two generated things are checked in, since a
// tag publishes them from there: the Go module at sdk/go/dmarc
// (test/plugin/packages.test.ts fails while it is stale) and the schema at
// sdk/schema.json, which the Pulumi Registry reads (test/plugin/schema.test.ts).

import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { ensureSdkGenerator, projectRoot } from "./engine.mjs";
import { buildPythonSdk, GO_MODULE_FOLDER, packDotnetSdk, packNodejsSdk, writeGoModule } from "./sdk-packages.mjs";

export const SDK_LANGUAGES = ["nodejs", "python", "go", "dotnet"];

const fromProvider = createRequire(join(projectRoot, "provider", "package.json"));

/** The schema as a release's tag holds it, where the Pulumi Registry's list of community packages names it. */
export const REGISTRY_SCHEMA = join(projectRoot, "sdk", "schema.json");

/** The package's icon, for .NET's package (its generator would otherwise download one). */
const logo = join(projectRoot, "provider", "logo.png");

/**
 * Writes the schema of the built provider into `folder`; answers its path.
 * DMARC_PLUGIN_DOWNLOAD_URL, when set, is where the SDKs' programs have
 * Pulumi fetch the plugin (a fork's or a mirror's releases).
 */
export function writeSchema(folder) {
  const { packageSchema } = fromProvider("./dist/plugin/schema.js");
  const { version } = fromProvider("./package.json");
  mkdirSync(folder, { recursive: true });
  const schema = join(folder, "schema.json");
  const downloadUrl = process.env.DMARC_PLUGIN_DOWNLOAD_URL || undefined;
  writeFileSync(schema, `${JSON.stringify(packageSchema(version, downloadUrl), null, 2)}\n`);
  return schema;
}

/** The schema and the SDK of each of `languages` in `folder`; answers each SDK's folder by language. */
export async function generateSdks(folder, languages = SDK_LANGUAGES) {
  const schema = writeSchema(folder);
  const sdks = {};
  for (const language of languages) {
    const out = join(folder, language);
    const generator = await ensureSdkGenerator(language);
    execFileSync(generator, ["-schema", schema, "-language", language, "-out", out, "-logo", logo], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    sdks[language] = out;
  }
  return sdks;
}

/**
 * Compiles the TypeScript SDK in `folder` with tsc against this repository's
 * node_modules; answers the path of its entry, `bin/index.js`.
 */
export function compileNodejsSdk(folder) {
  const modules = join(folder, "node_modules");
  if (!existsSync(modules)) symlinkSync(join(projectRoot, "node_modules"), modules, "dir");
  try {
    execFileSync(join(projectRoot, "node_modules", ".bin", "tsc"), ["-p", folder], { cwd: folder, encoding: "utf8" });
  } catch (error) {
    // tsc writes its diagnostics to stdout.
    throw new Error(`tsc -p ${folder} failed: ${error.message}\n${error.stdout ?? ""}`);
  }
  // The compiled SDK reads its version from a package.json beside it, as Pulumi's own SDK builds copy it.
  copyFileSync(join(folder, "package.json"), join(folder, "bin", "package.json"));
  return join(folder, "bin", "index.js");
}

/**
 * The SDKs generated in `folder` as packages in `<folder>/packages/`, and the
 * Go module rewritten in `goModuleFolder` (default: sdk/go/dmarc, where it is
 * checked in); answers each package's path (`nupkg` only where `dotnet` is
 * installed).
 */
export function packageSdks(folder, sdks, goModuleFolder = GO_MODULE_FOLDER) {
  const out = join(folder, "packages");
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  compileNodejsSdk(sdks.nodejs);
  const { wheel, sdist } = buildPythonSdk(sdks.python, out);
  return {
    npm: packNodejsSdk(sdks.nodejs, out),
    wheel,
    sdist,
    goModule: writeGoModule(sdks.go, join(folder, "schema.json"), goModuleFolder),
    nupkg: packDotnetSdk(sdks.dotnet, out),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const folder = resolve(process.argv[2] ?? join(projectRoot, ".cache", "sdk"));
  const sdks = await generateSdks(folder);
  for (const [language, out] of Object.entries(sdks)) process.stdout.write(`${language}: ${out}\n`);
  const packages = packageSdks(folder, sdks);
  copyFileSync(join(folder, "schema.json"), REGISTRY_SCHEMA);
  packages.registrySchema = REGISTRY_SCHEMA;
  for (const [kind, path] of Object.entries(packages)) {
    process.stdout.write(`${kind}: ${path ?? "not built: no dotnet on PATH (the project is in dotnet/)"}\n`);
  }
}
