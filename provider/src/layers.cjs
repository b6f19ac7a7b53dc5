// The layers of provider/src (CONTRIBUTING's table), lowest first: a module
// imports from its own layer and those below it, never from one above. Read
// by .dependency-cruiser.cjs, which holds the rule, and
// scripts/options-trail.mjs, which counts a command's options climbing back
// up them. Not part of the package: tsc and the bundle take only TypeScript.

module.exports = [
  ["api", "cli"],
  ["client", "receiver", "dns"],
  ["runtime"],
  ["resources"],
  ["functions", "registry.ts"],
  ["providerHost.ts"],
  ["providers"],
  ["tenant"],
  ["plugin"],
  ["inventory"],
  ["discovery"],
  ["checkpoint"],
  ["recovery"],
  ["fleet"],
  ["index.ts", "executable.ts"],
];
