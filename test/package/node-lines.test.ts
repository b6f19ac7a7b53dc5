import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../../scripts/project.mjs";
import { ensureNodeLine, otherNodeLines } from "../../scripts/toolchains/node-lines.mjs";
import { FULL } from "../reliability/harness";
import { useEngine } from "../support/engine";

// The supported Node.js lines other than the one running these tests: the
// packed-package test runs again in a vitest of its own under that line's
// node, first on PATH, so the program, the language host's `node` and the
// dynamic provider all run on it too; `npm run test:reliability` runs the
// engine smoke test there as well, whose dynamic resource the packed
// package's tenants already take through the engine on that line. The
// binaries come from the npm registry (scripts/toolchains/node-lines.mjs).

const files = [...(FULL ? ["test/engine/smoke.test.ts"] : []), "test/package/partner.test.ts"];
const vitest = join(projectRoot, "node_modules", "vitest", "vitest.mjs");

interface VitestResults {
  numTotalTests: number;
  numPassedTests: number;
  numFailedTests: number;
  numFailedTestSuites: number;
  testResults: { assertionResults: { fullName: string; status: string }[] }[];
}

function run(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: projectRoot, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-20_000);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

describe.each(otherNodeLines())("on Node.js %i", (line) => {
  it(`passes ${FULL ? "the engine smoke test and " : ""}the packed-package test`, async () => {
    await useEngine();
    const { binDir, node, version } = await ensureNodeLine(line);
    // Vitest's own variables would make the inner run take itself for a worker of this one.
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("VITEST")));
    env.PATH = [binDir, process.env.PATH].join(delimiter);
    const resultsDir = mkdtempSync(join(tmpdir(), `dmarc-node-${line}-`));
    const resultsFile = join(resultsDir, "results.json");
    try {
      const { code, output } = await run(
        node,
        [
          vitest,
          "run",
          "--maxWorkers=1",
          "--reporter=default",
          "--reporter=json",
          `--outputFile.json=${resultsFile}`,
          ...files,
        ],
        env,
      );
      expect(code, `vitest on Node.js ${version} failed:\n${output}`).toBe(0);
      const results = JSON.parse(readFileSync(resultsFile, "utf8")) as VitestResults;
      const names = results.testResults.flatMap((file) => file.assertionResults.map((test) => test.fullName));
      expect(results.numFailedTests + results.numFailedTestSuites).toBe(0);
      // Every test of the files ran and passed: none skipped, no file missing.
      expect(results.testResults).toHaveLength(files.length);
      expect(results.numPassedTests).toBe(results.numTotalTests);
      // The packed-package tests name the Node.js they ran on: every one of them ran on this line.
      const packaged = names.filter((name) => name.startsWith("the packed package"));
      expect(packaged.length).toBeGreaterThan(0);
      for (const name of packaged) expect(name).toContain(`on Node.js ${version}`);
    } finally {
      rmSync(resultsDir, { recursive: true, force: true });
    }
  }, 900_000);
});
