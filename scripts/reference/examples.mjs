// The reference pages' examples: each written once, in PCL (Pulumi's
// intermediate language, what `pulumi convert` goes through), in
// scripts/reference/examples/<page>.pp, and shown in every language by
// Pulumi's own program generators (scripts/sdk/codegen/program-gen/), against the
// schema of the build (scripts/sdk/schema.mjs), so each property is named as
// its language names it.

import { readdirSync } from "node:fs";
import { basename, join } from "node:path";
import { runProcess } from "../build/process.mjs";
import { ensureProgramGenerator } from "../sdk/generators.mjs";
import { ensureSchema } from "../sdk/schema.mjs";

/** Where the examples' sources are, one per page, named after it. */
const EXAMPLES_DIR = join(import.meta.dirname, "examples");

/** @typedef {import("../sdk/generators.mjs").ExampleLanguage} ExampleLanguage */

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

/**
 * Every example in every language: page name → language → source. One run of
 * the generator per language converts all examples.
 * @returns {Promise<Record<string, Record<ExampleLanguage, string>>>}
 */
export async function exampleSources() {
  const files = readdirSync(EXAMPLES_DIR)
    .filter((file) => file.endsWith(".pp"))
    .sort();
  /** @type {Record<string, Record<ExampleLanguage, string>>} */
  const examples = Object.fromEntries(
    files.map((file) => [basename(file, ".pp"), /** @type {Record<ExampleLanguage, string>} */ ({})]),
  );
  if (files.length === 0) return examples;
  const { file: schema } = await ensureSchema(undefined);
  for (const { language } of EXAMPLE_LANGUAGES) {
    const generator = await ensureProgramGenerator(language);
    const paths = files.map((file) => join(EXAMPLES_DIR, file));
    // A failure says what the generator said, which names the example and its line.
    const output = await runProcess(generator, ["-schema", schema, "-language", language, ...paths], {
      what: `converting the examples to ${language}`,
    });
    for (const [path, source] of Object.entries(JSON.parse(output))) {
      // Markdown keeps no trailing blanks; the generators leave some (C#'s `() => `).
      examples[basename(path, ".pp")][language] = source.replace(/[ \t]+$/gm, "").trimEnd();
    }
  }
  return examples;
}
