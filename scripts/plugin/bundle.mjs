// The built provider (dist/executable.js: the plugin and its `recover`
// subcommand) bundled by esbuild into one CommonJS file, carrying the
// schema written once for the build (scripts/sdk/schema.mjs), which the
// executable serves as it is.

import { join } from "node:path";
import { build } from "esbuild";
import { FUNCTION_SERIALIZATION_MODULES, projectRoot, standInFor } from "../project.mjs";

/**
 * The bundle's `require` for what it does not carry: Node's built-in modules
 * only, and "not found" for any other, as in an install without that
 * optional package. A single executable application's own `require` warns on
 * start that it loads built-in modules only, when js-yaml 3 (of
 * @pulumi/pulumi) looks for its optional `esprima`.
 */
const BUILTINS_ONLY = `require = ((load, { isBuiltin }) => (id) => {
  if (isBuiltin(id)) return load(id);
  throw Object.assign(new Error(\`Cannot find module '\${id}'\`), { code: "MODULE_NOT_FOUND" });
})(require, require("node:module"));`;

const NOT_CARRIED = new RegExp(
  `^(${FUNCTION_SERIALIZATION_MODULES.map((name) => name.replace("/", "\\/")).join("|")})$`,
);

/** FUNCTION_SERIALIZATION_MODULES out of the bundle: they were two thirds of it and half of the CPU to the first answer. */
const leaveOutFunctionSerialization = {
  name: "leave out function serialization",
  setup(build) {
    build.onResolve({ filter: NOT_CARRIED }, ({ path }) => ({ path, namespace: "not-carried" }));
    build.onLoad({ filter: /.*/, namespace: "not-carried" }, ({ path }) => ({
      loader: "js",
      contents: `module.exports = ${standInFor(path, "the DMARC plugin")};`,
    }));
  },
};

/**
 * The built provider bundled into one CommonJS file that serves `schema`, the schema's text; the bundle's text.
 * @param {string} schema
 * @returns {Promise<string>}
 */
export async function bundlePlugin(schema) {
  const result = await build({
    entryPoints: [join(projectRoot, "provider", "dist", "executable.js")],
    bundle: true,
    platform: "node",
    format: "cjs",
    target: `node${process.versions.node.split(".")[0]}`,
    banner: { js: BUILTINS_ONLY },
    plugins: [leaveOutFunctionSerialization],
    define: { DMARC_PACKAGE_SCHEMA: JSON.stringify(schema) },
    legalComments: "none",
    logLevel: "error",
    write: false,
  });
  return result.outputFiles[0].text;
}
