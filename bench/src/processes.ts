import { createRequire } from "node:module";
import type * as Runner from "../../scripts/build/process.mjs" with { "resolution-mode": "import" };

// How the benchmark starts programs: through the build's one runner,
// scripts/build/process.mjs (from bench/src and bench/dist alike; every
// supported Node.js line loads an ECMAScript module with require). A step is
// bounded, its output kept and a failure names it; a program beside the
// benchmark keeps its output and is the benchmark's to end.

export const { runProcess, startProcess } = createRequire(__filename)(
  "../../scripts/build/process.mjs",
) as typeof Runner;

export type StartedProcess = Runner.StartedProcess;
