// The layers of scripts/, by what each room makes, lowest first (CONTRIBUTING's
// "scripts/, by what it makes"): a room imports from its own layer and those
// below it, never from one above. Read by .dependency-cruiser.cjs, which
// holds the rule.

module.exports = [
  ["project.mjs"],
  ["build"],
  ["toolchains", "engine"],
  ["sdk"],
  ["plugin", "reference"],
  ["run.mjs", "demo.mjs", "dependencies.mjs", "options-trail.mjs", "test-summary.mjs", "layers.cjs", "checkout.mjs"],
];
