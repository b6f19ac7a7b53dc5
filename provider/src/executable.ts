// The plugin's executable, as scripts/plugin/bundle.mjs bundles it: the
// provider plugin the engine starts, and, as `pulumi-resource-dmarc recover`,
// dmarc-recover for a YAML, Python or Go user whose machine has the plugin
// Pulumi downloaded but no Node.js. The engine never passes `recover`: it
// starts a plugin with flags and the engine's address.

const [subcommand, ...rest] = process.argv.slice(2);

// Required, not imported: only the one asked for may load, since the plugin's module serves the engine on loading.
if (subcommand === "recover") {
  const { main } = require("./recovery/cli") as typeof import("./recovery/cli");
  void main(rest, "pulumi-resource-dmarc recover").then((code) => {
    process.exitCode = code;
  });
} else {
  require("./plugin/main");
}
