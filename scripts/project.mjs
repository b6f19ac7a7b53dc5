// The project's facts that the build scripts, the tests and the benchmark
// share, each written here once: where the project is, the versions it
// pins, and what the engine's dynamic provider and the plugin's bundle both
// leave out. Dependency-free, like every script that runs before `npm ci`
// has finished.

import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const projectRoot = resolve(fileURLToPath(new URL("..", import.meta.url)));

/**
 * Where what the build makes lives, a folder per kind of artefact
 * (scripts/build/artefact.mjs): the checkout's .cache/, or
 * DMARC_ARTEFACTS, so that a second checkout (a clone for CI, a worktree)
 * shares the first one's builds.
 */
export const artefactRoot = process.env.DMARC_ARTEFACTS || join(projectRoot, ".cache");

const manifest = (folder) => JSON.parse(readFileSync(join(projectRoot, folder, "package.json"), "utf8"));

/**
 * The @pulumi/pulumi version the repository builds, tests and locks, and so
 * the engine's: the package itself names only a peer range of it.
 * @returns {string}
 */
export function pinnedPulumiVersion() {
  const version = manifest(".").devDependencies?.["@pulumi/pulumi"];
  if (!/^\d+\.\d+\.\d+$/.test(version ?? "")) {
    throw new Error(`package.json must pin @pulumi/pulumi exactly in devDependencies (found "${version}")`);
  }
  return version;
}

/**
 * The package's version: the plugin's and the SDKs', as their archives and packages name it.
 * @returns {string}
 */
export function pluginVersion() {
  return manifest("provider").version;
}

/**
 * pulumi-yaml is versioned apart from the engine. 1.25.0 requires pkg/v3 and
 * sdk/v3 3.206.0 and is built with those: pinned to the engine's version it
 * does not compile (plugin.NewContextWithRoot gained parameters), and as a
 * process of its own it speaks to the engine through the language runtime's
 * gRPC protocol, which both releases share (test/engine/yaml.test.ts runs a
 * YAML program through it). Pulumi YAML's program generator is built with
 * the same modules.
 */
export const YAML_VERSION = "1.25.0";
export const YAML_PULUMI_VERSION = "3.206.0";

/**
 * .NET's code generators left pkg/v3 for pulumi-dotnet's module, which the
 * module proxy does not serve; 3.225.1 is the last pkg/v3 the proxy serves
 * that still has them, frozen as they were moved. The other languages'
 * generators are the engine's own version.
 */
export const DOTNET_CODEGEN_VERSION = "3.225.1";

/**
 * The passphrase only protects stacks in the project-local file backend used
 * by tests, the demo and the benchmark; a real stack brings its own.
 */
export const LOCAL_PASSPHRASE = "dmarc-partner-local";

/**
 * What @pulumi/pulumi loads on start only for serializing a program's functions (TypeScript's compiler, npm's
 * dependency tree), which a provider process never does: left out of the plugin's bundle and of this engine's
 * dynamic provider.
 */
export const FUNCTION_SERIALIZATION_MODULES = ["typescript", "@npmcli/arborist"];

/**
 * A JavaScript expression standing in for `request`: any use throws, saying that `carrier` does not carry it.
 * @param {string} request
 * @param {string} carrier
 * @returns {string}
 */
export function standInFor(request, carrier) {
  const message = `${carrier} does not carry ${request}, which only serializing a function needs`;
  return `new Proxy({}, {
  get(_, key) {
    if (typeof key === "symbol" || key === "__esModule") return undefined;
    throw new Error(${JSON.stringify(message)});
  },
})`;
}

/**
 * Whether the module at `url` is the script node was started with (`node <script>`), not an import.
 * @param {string} url
 * @returns {boolean}
 */
export const isMain = (url) => process.argv[1] !== undefined && fileURLToPath(url) === resolve(process.argv[1]);
