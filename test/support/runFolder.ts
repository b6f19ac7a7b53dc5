import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { projectRoot } from "../../scripts/project.mjs";

// Vitest's global setup: one folder for the whole run, which every test file
// is given and which goes when the run ends. A result several files compare
// against is made there once (test/support/onceARun.ts).

declare module "vitest" {
  export interface ProvidedContext {
    runFolder: string;
  }
}

export default function setup(project: TestProject): () => void {
  const runs = join(projectRoot, ".cache", "runs");
  mkdirSync(runs, { recursive: true });
  const folder = mkdtempSync(join(runs, "run-"));
  project.provide("runFolder", folder);
  return () => rmSync(folder, { recursive: true, force: true });
}
