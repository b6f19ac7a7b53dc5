// The dynamic provider plugin an official install ships as
// `pulumi-resource-pulumi-nodejs`, written beside this engine's `pulumi`:
// a shell launcher and what it loads first.

import { FUNCTION_SERIALIZATION_MODULES, standInFor } from "../project.mjs";

// Beside the dynamic provider plugin, what it loads first (below).
const DYNAMIC_PROVIDER_PRELOAD = "pulumi-resource-pulumi-nodejs.preload.cjs";

// What an official install ships as pulumi-resource-pulumi-nodejs: it runs the
// dynamic provider of the @pulumi/pulumi found from the working directory,
// which the engine sets to the program's, so the provider and the program
// share one SDK. Found by the shell, as Node looks for node_modules folders
// upwards (Node itself only where the shell finds none, for NODE_PATH): a
// `node -e require.resolve` first was a second Node start for every plugin.
const dynamicProviderPluginScript = `#!/bin/sh
preload="$(dirname "$0")/${DYNAMIC_PROVIDER_PRELOAD}"
dir=$PWD
while :; do
  script="$dir/node_modules/@pulumi/pulumi/cmd/dynamic-provider/index.js"
  if [ -f "$script" ]; then exec node --require "$preload" "$script" "$@"; fi
  [ "$dir" = / ] && break
  dir=\${dir%/*}
  dir=\${dir:-/}
done
script=$(node -e 'process.stdout.write(require.resolve("@pulumi/pulumi/cmd/dynamic-provider"))') || exit 1
exec node --require "$preload" "$script" "$@"
`;

// Loaded before the dynamic provider: @pulumi/pulumi loads TypeScript's compiler and npm's dependency tree on
// start, for serializing a program's functions, which a provider process never does; they were half of its CPU
// to the first answer (0.8 s against 0.37 s, 5 starts each). In their place for @pulumi/pulumi's own modules, one
// that says so if it is ever used. The official plugin loads them; what it runs is otherwise the same.
const dynamicProviderPreload = `"use strict";
const Module = require("node:module");
const STAND_INS = {
${FUNCTION_SERIALIZATION_MODULES.map((request) => `  ${JSON.stringify(request)}: ${standInFor(request, "the dynamic provider of this engine")},`).join("\n")}
};
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  if (Object.hasOwn(STAND_INS, request) && /[\\\\/]@pulumi[\\\\/]pulumi[\\\\/]/.test(parent?.filename ?? "")) {
    return __filename + "#" + request;
  }
  return resolve.call(this, request, parent, ...rest);
};
for (const [request, exports] of Object.entries(STAND_INS)) {
  const id = __filename + "#" + request;
  const stand = new Module(id, module);
  stand.filename = id;
  stand.loaded = true;
  stand.exports = exports;
  require.cache[id] = stand;
}
`;

/** The plugin's files, by name: their content and mode. */
export const DYNAMIC_PROVIDER_FILES = [
  { name: DYNAMIC_PROVIDER_PRELOAD, content: dynamicProviderPreload, mode: 0o644 },
  { name: "pulumi-resource-pulumi-nodejs", content: dynamicProviderPluginScript, mode: 0o755 },
];
