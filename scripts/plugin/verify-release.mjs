// The program the release's verification runs in each language after
// publishing (.github/workflows/release.yml, job verify-packages): a Pulumi
// project on the published package of its language at the release's
// version, whose program is the Registry's index page's example
// (docs/_index.md, as Pulumi's program generators write it, checked in each
// language by test/docs/examples.test.ts), run against the emulator on
// Linux, macOS and Windows. `pulumi install` installs the package from its
// registry and, from the package's plugin manifest, the plugin from the
// release. test/plugin/packages.test.ts writes the same projects on the
// packages this machine builds (`packages`) and checks them as far as this
// machine can.
//
//   node scripts/plugin/verify-release.mjs --language <nodejs|python|go|dotnet|yaml> --version <version> --out <folder>

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { isMain, projectRoot } from "../project.mjs";

const GO_MODULE = "github.com/dmarc-partner/pulumi-dmarc/sdk/go/dmarc";

/** The index page's example in the language of `fence`. */
function indexExample(fence) {
  const page = readFileSync(join(projectRoot, "docs", "_index.md"), "utf8");
  const block = new RegExp(
    `\\{\\{% choosable language ${fence} %\\}\\}\\n\\n\`\`\`${fence}\\n([^]*?)\\n\`\`\`\\n`,
  ).exec(page);
  if (!block) throw new Error(`docs/_index.md has no ${fence} example: run npm run docs`);
  return `${block[1]}\n`;
}

const json = (value) => `${JSON.stringify(value, null, 2)}\n`;

/**
 * Each language's project, by the name of its Pulumi runtime: the package as
 * its registry serves it at `version`, or, given `packages` (the paths
 * `npm run sdk` answers), as this machine built it.
 */
const PROJECTS = {
  nodejs: (version, packages) => ({
    "Pulumi.yaml": "name: verify-release\nruntime: nodejs\n",
    "index.ts": indexExample("typescript"),
    "package.json": json({
      name: "verify-release",
      private: true,
      main: "index.ts",
      dependencies: {
        "@dmarc-partner/pulumi-dmarc": packages ? `file:${packages.npm}` : version,
        "@pulumi/pulumi": "^3.139.0",
      },
      devDependencies: { typescript: "^5.0.0", "@types/node": "^20.0.0" },
    }),
    "tsconfig.json": json({
      compilerOptions: { strict: true, module: "commonjs", target: "es2022", skipLibCheck: true, outDir: "bin" },
      files: ["index.ts"],
    }),
  }),
  python: (version, packages) => ({
    "Pulumi.yaml":
      "name: verify-release\nruntime:\n  name: python\n  options:\n    toolchain: pip\n    virtualenv: venv\n",
    "__main__.py": indexExample("python"),
    "requirements.txt": `pulumi>=3.139.0,<4.0.0\n${packages ? packages.wheel : `pulumi-dmarc==${version}`}\n`,
  }),
  go: (version, packages) => ({
    "Pulumi.yaml": "name: verify-release\nruntime: go\n",
    "main.go": indexExample("go"),
    "go.mod": [
      "module verify-release",
      "",
      "go 1.25",
      "",
      `require ${GO_MODULE} v${version}`,
      ...(packages ? [`replace ${GO_MODULE} => ${JSON.stringify(packages.goModule)}`] : []),
      "",
    ].join("\n"),
  }),
  dotnet: (version, packages) => ({
    "Pulumi.yaml": "name: verify-release\nruntime: dotnet\n",
    "Program.cs": indexExample("csharp"),
    "verify-release.csproj": [
      '<Project Sdk="Microsoft.NET.Sdk">',
      "  <PropertyGroup>",
      "    <OutputType>Exe</OutputType>",
      "    <TargetFramework>net8.0</TargetFramework>",
      "    <Nullable>enable</Nullable>",
      "  </PropertyGroup>",
      "  <ItemGroup>",
      `    <PackageReference Include="DmarcPartner.Dmarc" Version="${version}" />`,
      "  </ItemGroup>",
      "</Project>",
      "",
    ].join("\n"),
    ...(packages?.nupkg ? { "nuget.config": nugetConfig(join(packages.nupkg, "..")) } : {}),
  }),
  yaml: () => ({
    // YAML has no package manager: the job installs the plugin from the release first.
    "Pulumi.yaml": `name: verify-release\nruntime: yaml\n${indexExample("yaml")}`,
  }),
};

/** A NuGet configuration that finds the package in `folder` before nuget.org. */
function nugetConfig(folder) {
  return [
    "<configuration>",
    "  <packageSources>",
    `    <add key="built" value=${JSON.stringify(folder)} />`,
    "  </packageSources>",
    "</configuration>",
    "",
  ].join("\n");
}

/**
 * Writes the verification's project of `language` into `folder`, on the
 * package of `version`; answers the files written, by name.
 * @param {string} language one of "nodejs", "python", "go", "dotnet" and "yaml"
 * @param {string} folder
 * @param {string} version
 * @param {{ npm?: string, wheel?: string, goModule?: string, nupkg?: string }} [packages] this machine's builds
 * @returns {Record<string, string>}
 */
export function writeVerifyProject(language, folder, version, packages) {
  const project = PROJECTS[language];
  if (!project)
    throw new Error(`no verification in "${language}": the languages are ${Object.keys(PROJECTS).join(", ")}`);
  const files = project(version, packages);
  mkdirSync(folder, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(folder, name), text);
  return files;
}

if (isMain(import.meta.url)) {
  const { values } = parseArgs({
    options: { language: { type: "string" }, version: { type: "string" }, out: { type: "string" } },
  });
  if (!values.language || !values.version || !values.out) {
    throw new Error("usage: verify-release.mjs --language <language> --version <version> --out <folder>");
  }
  const files = writeVerifyProject(values.language, values.out, values.version);
  process.stdout.write(`${Object.keys(files).join(", ")} in ${values.out}\n`);
}
