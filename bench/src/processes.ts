import { createRequire } from "node:module";

// How the benchmark starts programs: through the build's one runner,
// scripts/build/process.mjs (from bench/src and bench/dist alike; every
// supported Node.js line loads an ECMAScript module with require). A step is
// bounded, its output kept and a failure names it; a program beside the
// benchmark keeps its output and is the benchmark's to end.

type Runner = typeof import("../../scripts/build/process.mjs", { with: { "resolution-mode": "import" }});

export const { runProcess, startProcess } = createRequire(__filename)("../../scripts/build/process.mjs") as Runner;

export type StartedProcess = ReturnType<Runner["startProcess"]>;
