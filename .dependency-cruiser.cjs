// The module rules of provider/src, emulator/src, scripts/, the tests' support and the benchmark, checked in `npm test`
// (test/dependencies.test.ts) and drawn by `npm run graph` for CONTRIBUTING.
// The layers are CONTRIBUTING's table, lowest first: a module imports from
// its own layer and those below it, never from one above.

const LAYERS = require("./provider/src/layers.cjs");
const SCRIPT_LAYERS = require("./scripts/layers.cjs");

const escaped = (name) => name.replace(/\./g, "\\.");
/** The path pattern of a layer's folders and files under provider/src. */
const layerPath = (names) => `^provider/src/(${names.map(escaped).join("|")})(/|$)`;

const upwardRules = LAYERS.slice(0, -1).map((names, index) => ({
  name: `layer-${index + 1}-imports-down`,
  comment: `${names.join(", ")} may import only from its own layer and those below it (CONTRIBUTING.md)`,
  severity: "error",
  from: { path: layerPath(names) },
  to: { path: layerPath(LAYERS.slice(index + 1).flat()) },
}));

const scriptPath = (names) => `^scripts/(${names.map(escaped).join("|")})(/|$)`;

const scriptRules = SCRIPT_LAYERS.slice(0, -1).map((names, index) => ({
  name: `scripts-layer-${index + 1}-imports-down`,
  comment: `scripts/ ${names.join(", ")} may import only from its own layer and those below it (CONTRIBUTING.md)`,
  severity: "error",
  from: { path: scriptPath(names) },
  to: { path: scriptPath(SCRIPT_LAYERS.slice(index + 1).flat()) },
}));

/** What nothing imports by design: the package's entry points, and the emulator's. */
const ENTRY_POINTS = [
  "^provider/src/index\\.ts$",
  "^provider/src/[^/]+/index\\.ts$",
  "^provider/src/providers/",
  "^provider/src/fleet/cli/main\\.ts$",
  "^provider/src/recovery/cli\\.ts$",
  "^provider/src/plugin/main\\.ts$",
  "^provider/src/executable\\.ts$",
  "^provider/src/fleet/page/browser/pageScript\\.ts$",
  "^emulator/src/(index|main|cli)\\.ts$",
  "\\.d\\.ts$",
];

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "a circle makes two modules one: neither can be read, tested or moved alone (type-only imports too)",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "no-orphans",
      comment:
        "a module nothing imports is dead code, unless it is an entry point (or provider/src's layer table, which this file and scripts/options-trail.mjs read)",
      severity: "error",
      from: {
        orphan: true,
        path: "^(provider|emulator)/src/",
        pathNot: [...ENTRY_POINTS, "^provider/src/layers\\.cjs$"],
      },
      to: {},
    },
    {
      name: "layers-known",
      comment: "every top-level folder or file of provider/src is in a layer: add a new one to provider/src/layers.cjs",
      severity: "error",
      from: { path: "^provider/src/", pathNot: [layerPath(LAYERS.flat()), "^provider/src/layers\\.cjs$"] },
      to: {},
    },
    ...upwardRules,
    {
      name: "scripts-layers-known",
      comment: "every folder or file of scripts/ is in a layer: add a new one to scripts/layers.cjs",
      severity: "error",
      from: { path: "^scripts/", pathNot: scriptPath(SCRIPT_LAYERS.flat()) },
      to: {},
    },
    ...scriptRules,
    {
      name: "emulator-uses-wire-schemas-only",
      comment:
        "the emulator is the service: of the provider it knows only the wire format and the DNS codec (pulumi-dmarc-partner/api, /dns)",
      severity: "error",
      from: { path: "^emulator/src/" },
      to: { path: "^provider/", pathNot: "^provider/(src|dist)/(api|dns)/" },
    },
    {
      name: "fleet-command-line-on-top",
      comment:
        "fleet/cli/ reads and runs the commands; no room of the fleet depends on it (the /fleet entry re-exports it)",
      severity: "error",
      from: { path: "^provider/src/fleet/", pathNot: "^provider/src/fleet/(cli/|index\\.ts$)" },
      to: { path: "^provider/src/fleet/cli/" },
    },
    {
      name: "fleet-rooms-never-call-the-runner",
      comment: "the runner schedules the rooms' work; a room that called it back would schedule too",
      severity: "error",
      from: { path: "^provider/src/fleet/", pathNot: "^provider/src/fleet/(cli/|index\\.ts$|runner\\.ts$)" },
      to: { path: "^provider/src/fleet/runner\\.ts$" },
    },
    {
      name: "client-rooms-stay-inside",
      comment: "the client's rooms are its own: the rest of the provider calls DmarcClient, through client/index.ts",
      severity: "error",
      from: { path: "^provider/src/", pathNot: "^provider/src/client/" },
      to: { path: "^provider/src/client/[^/]+/" },
    },
    {
      name: "page-script-stays-in-the-browser",
      comment:
        "fleet/page/browser/ runs in the page, which loads nothing: it imports only its own modules and the page's model (types)",
      severity: "error",
      from: { path: "^provider/src/fleet/page/browser/" },
      to: { pathNot: "^provider/src/fleet/page/(browser/|model\\.ts$)" },
    },
    {
      name: "programs-started-through-the-runner",
      comment:
        "the tests' support and the benchmark start programs through the build's one runner, scripts/build/process.mjs (the benchmark's through bench/src/processes.ts): bounded, their output kept, a failure naming the step",
      severity: "error",
      from: { path: "^(test/support|bench/src)/", pathNot: "^bench/src/processes\\.ts$" },
      to: { dependencyTypes: ["core"], path: "^(node:)?child_process$" },
    },
    {
      name: "benchmark-runs-programs-through-its-runner",
      comment: "the benchmark reaches the build's runner through one module of its own, bench/src/processes.ts",
      severity: "error",
      from: { path: "^bench/src/", pathNot: "^bench/src/processes\\.ts$" },
      to: { path: "^scripts/build/process\\.mjs$" },
    },
    {
      name: "client-knows-no-pulumi",
      comment: "the client, DNS and receiver kits run without the engine",
      severity: "error",
      from: { path: layerPath(["api", "cli", "client", "receiver", "dns"]) },
      to: { path: "@pulumi/pulumi" },
    },
  ],
  options: {
    includeOnly:
      "^(provider/src|provider/dist|emulator/src|scripts|test/support|bench/src|node_modules|(node:)?child_process$)",
    doNotFollow: { path: ["node_modules", "^provider/dist/"] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.base.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
    },
  },
};
