// `npm run docs`: writes the reference pages of docs/resources/ from the
// schemas of the built provider (scripts/run.mjs builds it first) and the
// plugin's schema with its examples (scripts/sdk/schema.mjs), and the
// generated parts of the Registry's two pages (registry.mjs).
// test/docs/reference.test.ts fails while a page differs from what this makes.

import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, join } from "node:path";
import { ask } from "../build/process.mjs";
import { isMain, projectRoot } from "../project.mjs";
import { INDEX_EXAMPLE } from "../sdk/examples.mjs";
import { ensureSchema } from "../sdk/schema.mjs";
import { fieldsOf } from "./fields.mjs";
import { functionPage, indexPage, inventoryPage, policyPage, resourcePage, tenantPage } from "./pages.mjs";
import { installationPage, indexPage as registryIndexPage } from "./registry.mjs";

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

/** The settings' defaults where the client options give one, by key. */
function settingDefaults(ClientOptionsSchema) {
  const fields = fieldsOf(ClientOptionsSchema, "input").filter((field) => "defaultValue" in field);
  return Object.fromEntries(fields.map((field) => [field.name, field.defaultValue]));
}

/**
 * Every generated page, by its path from the project root: the reference
 * pages, then the Registry's two; the examples' generators are built first if need be.
 * @returns {Promise<{ path: string, text: string }[]>}
 */
export async function referencePages() {
  const built = await ensureSchema(undefined);
  const schema = JSON.parse(built.text);
  const { registeredTypes } = fromProvider("./dist/registry.js");
  const { typeToken, pluginTypeToken } = fromProvider("./dist/runtime/typeToken.js");
  const { outputChanges } = fromProvider("./dist/runtime/lifecycle.js");
  const { InventoryFile } = fromProvider("./dist/inventory/inventory.js");
  const { DomainPolicyArgs } = fromProvider("./dist/tenant/policy.js");
  const { TENANT_TYPE } = fromProvider("./dist/tenant/tenant.js");
  const { invokeDefinitions } = fromProvider("./dist/plugin/invokes.js");
  const { TenantComponentInputs, TenantComponentOutputs } = fromProvider("./dist/plugin/tenantComponent.js");
  const { ClientOptionsSchema } = fromProvider("./dist/client/index.js");
  const types = registeredTypes.map((type) => ({
    name: basename(type.providerModule),
    typeToken: typeToken(type.typeName),
    pluginToken: pluginTypeToken(type.typeName),
    definition: type.definition,
    outputChanges: outputChanges(type.definition),
    schema,
  }));
  const functions = Object.entries(invokeDefinitions).map(([name, definition]) => ({
    name,
    token: pluginTypeToken(name),
    definition,
    schema,
  }));
  const tenant = { token: TENANT_TYPE, inputs: TenantComponentInputs, outputs: TenantComponentOutputs, schema };
  const pages = [
    { file: "README.md", text: indexPage(types, functions) },
    ...types.map((type) => ({ file: `${type.name}.md`, text: resourcePage(type) })),
    { file: "tenant.md", text: tenantPage(tenant) },
    ...functions.map((fn) => ({ file: `${fn.name}.md`, text: functionPage(fn) })),
    { file: "inventory.md", text: inventoryPage(InventoryFile) },
    { file: "policy.md", text: policyPage(DomainPolicyArgs) },
  ].map(({ file, text }) => ({ path: `${REFERENCE_DIR}/${file}`, text: `${text}\n` }));
  const registry = [
    registryIndexPage(built.examples[INDEX_EXAMPLE]),
    installationPage(schema, settingDefaults(ClientOptionsSchema)),
  ];
  return [...pages.map(({ path, text }) => ({ path, text: formatted(path, text) })), ...registry];
}

/** Writes every page, and removes the pages of types no longer registered. */
async function writePages() {
  const pages = await referencePages();
  const folder = join(projectRoot, REFERENCE_DIR);
  mkdirSync(folder, { recursive: true });
  const written = new Set(pages.map((page) => page.path));
  for (const file of readdirSync(folder)) {
    if (file.endsWith(".md") && !written.has(`${REFERENCE_DIR}/${file}`)) rmSync(join(folder, file));
  }
  for (const page of pages) writeFileSync(join(projectRoot, page.path), page.text);
  process.stdout.write(`wrote ${pages.length} pages: ${REFERENCE_DIR}/ and the Registry's\n`);
}

if (isMain(import.meta.url)) await writePages();
