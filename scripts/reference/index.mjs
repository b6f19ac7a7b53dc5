// `npm run docs`: writes the reference pages of docs/resources/ from the
// schemas of the built provider (scripts/run.mjs builds it first).
// test/docs/reference.test.ts fails while a page differs from what this makes.

import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, join } from "node:path";
import { ask } from "../build/process.mjs";
import { isMain, projectRoot } from "../project.mjs";
import { ensureSchema } from "../sdk/schema.mjs";
import { exampleSources } from "./examples.mjs";
import { functionPage, indexPage, inventoryPage, policyPage, resourcePage } from "./pages.mjs";

/** Where the pages go, from the project root. */
export const REFERENCE_DIR = "docs/resources";

const fromProvider = createRequire(join(projectRoot, "provider", "package.json"));

/** The text as the repository's formatter writes Markdown (tables aligned), so `biome ci` passes on the pages. */
function formatted(path, text) {
  const biome = join(projectRoot, "node_modules", ".bin", "biome");
  const result = ask(biome, ["format", `--stdin-file-path=${path}`], { cwd: projectRoot, input: text });
  if (!result.ok) throw new Error(`biome could not format ${path}:\n${result.said}`);
  return result.stdout;
}

/**
 * Every reference page, by its path from the project root; the examples' generators are built first if need be.
 * @returns {Promise<{ path: string, text: string }[]>}
 */
export async function referencePages() {
  const examples = await exampleSources();
  const { registeredTypes } = fromProvider("./dist/registry.js");
  const { typeToken, pluginTypeToken } = fromProvider("./dist/runtime/typeToken.js");
  const { outputChanges } = fromProvider("./dist/runtime/lifecycle.js");
  const { InventoryFile } = fromProvider("./dist/inventory/inventory.js");
  const { DomainPolicyArgs } = fromProvider("./dist/tenant/policy.js");
  const { invokeDefinitions } = fromProvider("./dist/plugin/invokes.js");
  const pluginTokens = Object.keys(JSON.parse((await ensureSchema(undefined)).text).resources);
  const pluginTokenOf = (typeName) => {
    const token = pluginTokens.find((candidate) => candidate.endsWith(`:${typeName}`));
    if (!token) throw new Error(`the plugin's schema has no resource ${typeName}`);
    return token;
  };
  const types = registeredTypes.map((type) => ({
    name: basename(type.providerModule),
    typeToken: typeToken(type.typeName),
    pluginToken: pluginTokenOf(type.typeName),
    definition: type.definition,
    outputChanges: outputChanges(type.definition),
    example: examples[basename(type.providerModule)],
  }));
  const functions = Object.entries(invokeDefinitions).map(([name, definition]) => ({
    name,
    token: pluginTypeToken(name),
    definition,
    example: examples[name],
  }));
  const pageless = Object.keys(examples).filter(
    (name) => !types.some((type) => type.name === name) && !functions.some((fn) => fn.name === name),
  );
  if (pageless.length > 0) throw new Error(`examples of no resource type's or function's page: ${pageless.join(", ")}`);
  const pages = [
    { file: "README.md", text: indexPage(types, functions) },
    ...types.map((type) => ({ file: `${type.name}.md`, text: resourcePage(type) })),
    ...functions.map((fn) => ({ file: `${fn.name}.md`, text: functionPage(fn) })),
    { file: "inventory.md", text: inventoryPage(InventoryFile) },
    { file: "policy.md", text: policyPage(DomainPolicyArgs) },
  ];
  return pages.map(({ file, text }) => {
    const path = `${REFERENCE_DIR}/${file}`;
    return { path, text: formatted(path, `${text}\n`) };
  });
}

/** Writes every page, and removes the pages of types no longer registered. */
async function writePages() {
  const pages = await referencePages();
  const folder = join(projectRoot, REFERENCE_DIR);
  mkdirSync(folder, { recursive: true });
  const written = new Set(pages.map((page) => basename(page.path)));
  for (const file of readdirSync(folder)) {
    if (file.endsWith(".md") && !written.has(file)) rmSync(join(folder, file));
  }
  for (const page of pages) writeFileSync(join(projectRoot, page.path), page.text);
  process.stdout.write(`wrote ${pages.length} pages to ${REFERENCE_DIR}/\n`);
}

if (isMain(import.meta.url)) await writePages();
