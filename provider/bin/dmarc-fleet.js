#!/usr/bin/env node
// `npx dmarc-fleet`: runs a tenants inventory as many small stacks. See docs/guides/fleets.md.
require("../dist/fleet/cli/main.js")
  .main()
  .then((code) => {
    process.exitCode = code;
  });
