#!/usr/bin/env node
// `npx dmarc-fleet`: runs a tenants inventory as many small stacks. See the README's "Fleets".
require("../dist/fleet/cli.js")
  .main()
  .then((code) => {
    process.exitCode = code;
  });
