#!/usr/bin/env node
// Committed (not built) so npm links the command at install time, before tsc has run.
require("../dist/main.js");
