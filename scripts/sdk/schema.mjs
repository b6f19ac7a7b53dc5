// The plugin's schema, written once per build of the provider (the artefact
// `schema`, by its text) from dist/plugin/schema.js with the examples
// embedded in its descriptions: the one file the code generators read, the
// executable carries (scripts/plugin/bundle.mjs) and a tag publishes as
// sdk/schema.json. In two steps, so nothing is made from itself: the
// provider's schema without examples, from which the program generators
// convert the examples (examples.mjs), then the same schema with them.

import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { ensureArtefact } from "../build/artefact.mjs";
import { pluginVersion, projectRoot } from "../project.mjs";
import { ensureExamples, examplesSection, INDEX_EXAMPLE } from "./examples.mjs";

const fromProvider = createRequire(join(projectRoot, "provider", "package.json"));

/** The schema as a release's tag holds it, where the Pulumi Registry's list of community packages names it. */
export const REGISTRY_SCHEMA = join(projectRoot, "sdk", "schema.json");

/**
 * Where the SDKs' programs have Pulumi fetch the plugin, when not the
 * schema's default: DMARC_PLUGIN_DOWNLOAD_URL (a fork's or a mirror's releases).
 * @returns {string | undefined}
 */
export const downloadUrlFromEnvironment = () => process.env.DMARC_PLUGIN_DOWNLOAD_URL || undefined;

const asText = (schema) => `${JSON.stringify(schema, null, 2)}\n`;

/** The example named as a resource or function (`domain` for dmarc:index:Domain, `getPlans`), by its token. */
function exampleNamed(examples, token) {
  const name = token.slice(token.lastIndexOf(":") + 1);
  return examples[name.charAt(0).toLowerCase() + name.slice(1)];
}

/**
 * `schema` with each resource's and function's example in its description,
 * before its `## Import` section as in Pulumi's own providers' schemas; an
 * example of nothing, or a member without one, fails the build.
 */
function withExamples(schema, examples) {
  const members = [...Object.entries(schema.resources), ...Object.entries(schema.functions)];
  const missing = members.filter(([token]) => !exampleNamed(examples, token)).map(([token]) => token);
  if (missing.length > 0) {
    throw new Error(`no example for ${missing.join(", ")}: write scripts/sdk/examples/<name>.pp for each`);
  }
  const named = new Set(members.map(([token]) => exampleNamed(examples, token)));
  const stray = Object.keys(examples).filter((name) => name !== INDEX_EXAMPLE && !named.has(examples[name]));
  if (stray.length > 0) throw new Error(`examples of no resource or function of the schema: ${stray.join(", ")}`);
  for (const [token, member] of members) {
    const section = examplesSection(exampleNamed(examples, token));
    const [about, ...rest] = member.description.split("\n\n## Import\n");
    member.description = [`${about}\n\n${section}`, ...rest].join("\n\n## Import\n");
  }
  return schema;
}

/**
 * The schema of the built provider naming `downloadUrl` (undefined: the
 * schema's default), with its examples, written once; answers its file, its
 * text, and every example (the index page's too) by name.
 * @param {string | undefined} downloadUrl
 * @returns {Promise<{ file: string, text: string, examples: Record<string, import("./examples.mjs").Example> }>}
 */
export async function ensureSchema(downloadUrl) {
  const { packageSchema } = fromProvider("./dist/plugin/schema.js");
  // Made from the default address's schema, whatever a build names: the examples do not depend on it.
  const examples = await ensureExamples(asText(packageSchema(pluginVersion(), undefined)));
  const text = asText(withExamples(packageSchema(pluginVersion(), downloadUrl), examples));
  const { folder } = await ensureArtefact("schema", { text }, (work) => {
    writeFileSync(join(work, "schema.json"), text);
  });
  const file = join(folder, "schema.json");
  return { file, text: readFileSync(file, "utf8"), examples };
}
