// Pulumi's code generators, built from this room's Go module codegen/: the
// SDK generator (sdk-gen/) and the program generator (program-gen/), which
// share the binding of a schema file (schemafile/), each an artefact per
// build. A build is the module's sources with a pkg/v3 and
// build tags: the engine's pkg/v3 for Node.js, Python and Go; .NET's
// generators are only in DOTNET_CODEGEN_VERSION's (tag dotnet); Pulumi
// YAML's program generator is built with the modules pulumi-yaml requires
// (tag yaml).

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureArtefact } from "../build/artefact.mjs";
import { goBuild, prepareOwnBuild, requireGo, sourceInputs } from "../build/go.mjs";
import { DOTNET_CODEGEN_VERSION, pinnedPulumiVersion, YAML_PULUMI_VERSION, YAML_VERSION } from "../project.mjs";

/** @typedef {"nodejs" | "python" | "go" | "dotnet" | "yaml"} ExampleLanguage */

const codegen = join(dirname(fileURLToPath(import.meta.url)), "codegen");

/** A generator's command folder and builds: the languages each writes, its pkg/v3 (the engine's when unset), tags, other modules. */
const BUILDS = {
  "pulumi-sdk-gen": {
    command: "sdk-gen",
    builds: [
      { languages: ["nodejs", "python", "go"] },
      { languages: ["dotnet"], pulumi: DOTNET_CODEGEN_VERSION, tags: ["dotnet"] },
    ],
  },
  "pulumi-program-gen": {
    command: "program-gen",
    builds: [
      { languages: ["nodejs", "python", "go"] },
      { languages: ["dotnet"], pulumi: DOTNET_CODEGEN_VERSION, tags: ["dotnet"] },
      {
        languages: ["yaml"],
        pulumi: YAML_PULUMI_VERSION,
        tags: ["yaml"],
        modules: [`github.com/pulumi/pulumi-yaml@v${YAML_VERSION}`],
      },
    ],
  },
};

async function ensureGenerator(binary, language, what) {
  const { command, builds } = BUILDS[binary];
  const build = builds.find((candidate) => candidate.languages.includes(language));
  if (!build) {
    const known = builds.flatMap((candidate) => candidate.languages).join(", ");
    throw new Error(`no ${what} for the language "${language}": the languages are ${known}`);
  }
  const pulumi = build.pulumi ?? pinnedPulumiVersion();
  const tags = build.tags ?? [];
  const modules = [`github.com/pulumi/pulumi/pkg/v3@v${pulumi}`, `github.com/pulumi/pulumi/sdk/v3@v${pulumi}`];
  modules.push(...(build.modules ?? []));
  const sources = sourceInputs(codegen, ["schemafile", command]);
  const inputs = { binary, pulumi, tags, modules, go: requireGo(`the ${what}`), sources };
  const kind = [binary, ...tags].join("-");
  const made = await ensureArtefact(kind, inputs, async (work, scratch) => {
    process.stderr.write(`[sdk] building the ${what} for ${build.languages.join(", ")} with pkg/v3 v${pulumi}\n`);
    await prepareOwnBuild(scratch, codegen, modules);
    const flags = tags.length > 0 ? ["-tags", tags.join(",")] : [];
    await goBuild(scratch, `./${command}`, join(work, binary), { flags, what: `compiling ${binary}` });
    return { languages: build.languages };
  });
  return join(made.folder, binary);
}

/**
 * The SDK generator that writes `language`'s SDK (nodejs, python, go or
 * dotnet), built when missing; answers its path. It takes `-schema
 * <schema.json> -language <language> -out <folder>` (and `-logo <png>` for
 * .NET's package icon), and replaces the folder. Go is needed even when the
 * CLI is on PATH.
 * @param {"nodejs" | "python" | "go" | "dotnet"} language
 * @returns {Promise<string>}
 */
export function ensureSdkGenerator(language) {
  return ensureGenerator("pulumi-sdk-gen", language, "SDK generator");
}

/**
 * The program generator that writes programs in `language` (nodejs, python,
 * go, dotnet or yaml) from PCL, built as the SDK generator is; answers its
 * path. It takes `-schema <schema.json> -language <language> <program.pp>...`
 * and prints a JSON object, each program's path → its source.
 * @param {ExampleLanguage} language
 * @returns {Promise<string>}
 */
export function ensureProgramGenerator(language) {
  return ensureGenerator("pulumi-program-gen", language, "program generator");
}
