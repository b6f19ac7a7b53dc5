// The plugin's schema, written once per build of the provider (the artefact
// `schema`, by its text) from dist/plugin/schema.js: the one file the code
// generators read, the executable carries (scripts/plugin/bundle.mjs) and a
// tag publishes as sdk/schema.json.

import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { ensureArtefact } from "../build/artefact.mjs";
import { pluginVersion, projectRoot } from "../project.mjs";

const fromProvider = createRequire(join(projectRoot, "provider", "package.json"));

/** The schema as a release's tag holds it, where the Pulumi Registry's list of community packages names it. */
export const REGISTRY_SCHEMA = join(projectRoot, "sdk", "schema.json");

/**
 * Where the SDKs' programs have Pulumi fetch the plugin, when not the
 * schema's default: DMARC_PLUGIN_DOWNLOAD_URL (a fork's or a mirror's releases).
 * @returns {string | undefined}
 */
export const downloadUrlFromEnvironment = () => process.env.DMARC_PLUGIN_DOWNLOAD_URL || undefined;

/**
 * The schema of the built provider naming `downloadUrl` (undefined: the
 * schema's default), written once; answers its file and its text.
 * @param {string | undefined} downloadUrl
 * @returns {Promise<{ file: string, text: string }>}
 */
export async function ensureSchema(downloadUrl) {
  const { packageSchema } = fromProvider("./dist/plugin/schema.js");
  const text = `${JSON.stringify(packageSchema(pluginVersion(), downloadUrl), null, 2)}\n`;
  const { folder } = await ensureArtefact("schema", { text }, (work) => {
    writeFileSync(join(work, "schema.json"), text);
  });
  const file = join(folder, "schema.json");
  return { file, text: readFileSync(file, "utf8") };
}
