#!/usr/bin/env node
// Committed (not built) so npm links the command at install time, before tsc has run.
require("../dist/recovery/cli.js")
  .main(process.argv.slice(2))
  .then((code) => {
    process.exitCode = code;
  });
