// The examples: each resource's and function's of the schema, and the
// Registry's index page's (`_index`), written once in PCL (Pulumi's
// intermediate language, what `pulumi convert` goes through) as
// scripts/sdk/examples/<name>.pp, its first line the example's title as a
// comment, and shown in every language by Pulumi's own program generators
// (codegen/program-gen/), so each property is named as its language names
// it. They are made from the schema without examples, whose types are all a
// generator binds against; schema.mjs then embeds them in the descriptions
// in the Registry's `{{% examples %}}` form, which the SDK generators put in
// each SDK's doc comments and scripts/reference/ on the pages: one text,
// generated once per schema, sources and generators (the artefact `examples`).

import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { ensureArtefact, fileDigest } from "../build/artefact.mjs";
import { ask, runProcess } from "../build/process.mjs";
import { projectRoot } from "../project.mjs";
import { ensureProgramGenerator } from "./generators.mjs";

/** Where the examples' sources are, one per resource, function or page, named after it. */
const EXAMPLES_DIR = join(import.meta.dirname, "examples");

/** The example of the Registry's index page, docs/_index.md: in no description of the schema. */
export const INDEX_EXAMPLE = "_index";

/** @typedef {import("./generators.mjs").ExampleLanguage} ExampleLanguage */

/**
 * An example: its title, and its source in each language.
 * @typedef {{ title: string, sources: Record<ExampleLanguage, string> }} Example
 */

/**
 * The languages of an example, in the order a page shows them: the generator's name, the heading, the code fence's.
 * @type {readonly { language: ExampleLanguage, heading: string, fence: string }[]}
 */
export const EXAMPLE_LANGUAGES = [
  { language: "nodejs", heading: "TypeScript", fence: "typescript" },
  { language: "python", heading: "Python", fence: "python" },
  { language: "go", heading: "Go", fence: "go" },
  { language: "dotnet", heading: "C#", fence: "csharp" },
  { language: "yaml", heading: "YAML", fence: "yaml" },
];

const TITLE = /^\/\/ (.+)\n/;

/** The repository's formatter, which lays out the TypeScript in a page's Markdown as it does the code's. */
const biome = join(projectRoot, "node_modules", ".bin", "biome");
const biomeVersion = () =>
  JSON.parse(readFileSync(join(projectRoot, "node_modules", "@biomejs", "biome", "package.json"), "utf8")).version;

/**
 * The TypeScript as the pages' formatter leaves it (two spaces, not the
 * generator's four), so that the schema and the pages carry one text.
 */
function formattedTypeScript(source) {
  const result = ask(biome, ["format", "--stdin-file-path=example.ts"], { cwd: projectRoot, input: source });
  if (!result.ok) throw new Error(`biome could not format a TypeScript example:\n${result.said}`);
  return result.stdout;
}

/** What each language's generated source goes through before it is kept. */
const FINISHING = { nodejs: formattedTypeScript };

/** Each example's source file, by name. */
function exampleFiles() {
  const files = readdirSync(EXAMPLES_DIR).filter((file) => file.endsWith(".pp"));
  return Object.fromEntries(files.sort().map((file) => [basename(file, ".pp"), join(EXAMPLES_DIR, file)]));
}

/**
 * Every example, converted from `schemaText` (the schema without examples):
 * name → { title, sources: generator language → source }. One run of the
 * generator per language converts them all.
 * @param {string} schemaText
 * @returns {Promise<Record<string, Example>>}
 */
export async function ensureExamples(schemaText) {
  const files = exampleFiles();
  const generators = {};
  for (const { language } of EXAMPLE_LANGUAGES) generators[language] = await ensureProgramGenerator(language);
  const sources = Object.fromEntries(Object.entries(files).map(([name, file]) => [name, fileDigest(file)]));
  // This module too: how a source is finished is part of what the artefact holds.
  const inputs = {
    schema: schemaText,
    generators,
    sources,
    biome: biomeVersion(),
    script: fileDigest(import.meta.filename),
  };
  const { folder } = await ensureArtefact("examples", inputs, (work, scratch) =>
    convert(files, schemaText, generators, work, scratch),
  );
  return JSON.parse(readFileSync(join(folder, "examples.json"), "utf8"));
}

async function convert(files, schemaText, generators, work, scratch) {
  const schema = join(scratch, "schema.json");
  writeFileSync(schema, schemaText);
  mkdirSync(join(scratch, "pcl"));
  const examples = {};
  for (const [name, file] of Object.entries(files)) {
    const text = readFileSync(file, "utf8");
    const title = TITLE.exec(text)?.[1];
    if (!title) throw new Error(`${file}: its first line must be its title, as a comment: // <title>`);
    // The title's line left blank: the generators' messages keep the file's line numbers.
    writeFileSync(join(scratch, "pcl", `${name}.pp`), text.replace(TITLE, "\n"));
    examples[name] = { title, sources: {} };
  }
  const paths = Object.keys(files).map((name) => join(scratch, "pcl", `${name}.pp`));
  for (const { language } of EXAMPLE_LANGUAGES) {
    // A failure says what the generator said, which names the example and its line.
    const output = await runProcess(generators[language], ["-schema", schema, "-language", language, ...paths], {
      what: `converting the examples to ${language}`,
    });
    const finish = FINISHING[language] ?? ((source) => source);
    for (const [path, source] of Object.entries(JSON.parse(output))) {
      // Markdown keeps no trailing blanks; the generators leave some (C#'s `() => `).
      examples[basename(path, ".pp")].sources[language] = finish(source)
        .replace(/[ \t]+$/gm, "")
        .trimEnd();
    }
  }
  writeFileSync(join(work, "examples.json"), `${JSON.stringify(examples, null, 2)}\n`);
  return { examples: Object.keys(examples) };
}

const fenced = (fence, source) => `\`\`\`${fence}\n${source}\n\`\`\``;

/**
 * An example as the Registry reads it in a schema description, and as
 * Pulumi's SDK generators keep of it the block of their language:
 * `{{% examples %}}`, a heading, `{{% example %}}` with its title and one
 * code block per language.
 * @param {Example} example
 * @returns {string}
 */
export function examplesSection({ title, sources }) {
  return [
    "{{% examples %}}",
    "## Example Usage",
    "{{% example %}}",
    `### ${title}`,
    "",
    ...EXAMPLE_LANGUAGES.map(({ language, fence }) => fenced(fence, sources[language])),
    "{{% /example %}}",
    "{{% /examples %}}",
  ].join("\n");
}

/**
 * The example a description carries in its `{{% examples %}}` section, or undefined.
 * @param {string} description
 * @returns {{ title: string, sources: Partial<Record<ExampleLanguage, string>> } | undefined}
 */
export function exampleIn(description) {
  const section =
    /\{\{% examples %\}\}\n[\s\S]*?\{\{% example %\}\}\n### (.*)\n\n([\s\S]*?)\n\{\{% \/example %\}\}/.exec(
      description,
    );
  if (!section) return undefined;
  const sources = {};
  for (const { language, fence } of EXAMPLE_LANGUAGES) {
    const block = new RegExp(`(?:^|\\n)\`\`\`${fence}\\n([^]*?)\\n\`\`\`(?=\\n|$)`).exec(section[2] ?? "");
    if (block) sources[language] = block[1];
  }
  return { title: section[1], sources };
}

/**
 * A description without its examples: what a page shows above them.
 * @param {string} description
 * @returns {string}
 */
export const withoutExamples = (description) =>
  description.replace(/\n*\{\{% examples %\}\}[\s\S]*?\{\{% \/examples %\}\}/, "");
