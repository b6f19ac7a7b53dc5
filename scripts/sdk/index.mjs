// `npm run sdk [-- <folder>]`: the plugin's schema and its SDKs for
// TypeScript, Python, Go and .NET, made by Pulumi's own code generators
// (generators.mjs) from the schema of the built provider (schema.mjs):
// <folder>/schema.json and <folder>/<language>/ (default .cache/sdk/),
// and the packages a release publishes in <folder>/packages/
// (packages.mjs). Each SDK is an artefact (`sdk-<language>`) of the schema
// and its generator, made once; the folders given are copies a caller may
// change. Two generated things are checked in, since a tag publishes them
// from there: the Go module at sdk/go/dmarc (test/plugin/packages.test.ts
// fails while it is stale) and the schema at sdk/schema.json, which the
// Pulumi Registry reads (test/plugin/schema.test.ts), with the logo the
// schema names, provider/logo.png, drawn from its SVG (logo.mjs).

import { copyFileSync, cpSync, mkdirSync, rmSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { ensureArtefact, fileDigest } from "../build/artefact.mjs";
import { runProcess } from "../build/process.mjs";
import { isMain, projectRoot } from "../project.mjs";
import { ensureSdkGenerator } from "./generators.mjs";
import { LOGO_PNG, writeLogo } from "./logo.mjs";
import { ensurePackages, GO_MODULE_FOLDER } from "./packages.mjs";
import { downloadUrlFromEnvironment, ensureSchema, REGISTRY_SCHEMA } from "./schema.mjs";

/** @typedef {"nodejs" | "python" | "go" | "dotnet"} SdkLanguage */

/** @type {readonly SdkLanguage[]} */
export const SDK_LANGUAGES = ["nodejs", "python", "go", "dotnet"];

/** The package's icon, for .NET's package (its generator would otherwise download one). */
const logo = LOGO_PNG;

/** `language`'s SDK of the schema file `schema`, generated once; answers its folder. */
async function ensureSdk(schema, language) {
  const generator = await ensureSdkGenerator(language);
  const inputs = { schema, generator, logo: fileDigest(logo) };
  const { folder } = await ensureArtefact(`sdk-${language}`, inputs, (work) =>
    runProcess(generator, ["-schema", schema, "-language", language, "-out", join(work, "sdk"), "-logo", logo], {
      what: `generating the ${language} SDK`,
    }).then(() => ({ language })),
  );
  return join(folder, "sdk");
}

/**
 * The schema (DMARC_PLUGIN_DOWNLOAD_URL naming where the SDKs' programs have
 * Pulumi fetch the plugin) and the SDK of each of `languages`, copied into
 * `folder`; answers each SDK's folder by language.
 * @param {string} folder
 * @param {readonly SdkLanguage[]} [languages]
 * @returns {Promise<Record<string, string>>}
 */
export async function generateSdks(folder, languages = SDK_LANGUAGES) {
  const schema = await ensureSchema(downloadUrlFromEnvironment());
  mkdirSync(folder, { recursive: true });
  copyFileSync(schema.file, join(folder, "schema.json"));
  /** @type {Record<string, string>} */
  const sdks = {};
  for (const language of languages) {
    sdks[language] = join(folder, language);
    rmSync(sdks[language], { recursive: true, force: true });
    cpSync(await ensureSdk(schema.file, language), sdks[language], { recursive: true });
  }
  return sdks;
}

/**
 * The SDKs' packages (packages.mjs) copied into `<folder>/packages/`, and the
 * Go module into `goModuleFolder` (default: sdk/go/dmarc, where it is checked
 * in); answers each package's path (`nupkg` only where `dotnet` is installed).
 * @param {string} folder
 * @param {string} [goModuleFolder]
 * @returns {Promise<{ npm: string, wheel: string, sdist: string, goModule: string, nupkg: string | undefined }>}
 */
export async function packageSdks(folder, goModuleFolder = GO_MODULE_FOLDER) {
  const schema = await ensureSchema(downloadUrlFromEnvironment());
  const sdks = Object.fromEntries(
    await Promise.all(SDK_LANGUAGES.map(async (language) => [language, await ensureSdk(schema.file, language)])),
  );
  const made = await ensurePackages(schema.file, sdks);
  const out = join(folder, "packages");
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const copied = {};
  for (const kind of ["npm", "wheel", "sdist", "nupkg"]) {
    if (!made[kind]) continue;
    copied[kind] = join(out, basename(made[kind]));
    copyFileSync(made[kind], copied[kind]);
  }
  rmSync(goModuleFolder, { recursive: true, force: true });
  cpSync(made.goModule, goModuleFolder, { recursive: true });
  const { npm, wheel, sdist, nupkg } = copied;
  return { npm, wheel, sdist, goModule: goModuleFolder, nupkg };
}

if (isMain(import.meta.url)) {
  const folder = resolve(process.argv[2] ?? join(projectRoot, ".cache", "sdk"));
  await writeLogo();
  const sdks = await generateSdks(folder);
  for (const [language, out] of Object.entries(sdks)) process.stdout.write(`${language}: ${out}\n`);
  const built = await packageSdks(folder);
  copyFileSync(join(folder, "schema.json"), REGISTRY_SCHEMA);
  const packages = { ...built, registrySchema: REGISTRY_SCHEMA };
  for (const [kind, path] of Object.entries(packages)) {
    process.stdout.write(`${kind}: ${path ?? "not built: no dotnet on PATH (the project is in dotnet/)"}\n`);
  }
}
