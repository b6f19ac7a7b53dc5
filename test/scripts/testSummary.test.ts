import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { projectRoot } from "../../scripts/project.mjs";

// scripts/test-summary.mjs, the line CI reads, fed made-up vitest JSON result
// files shaped as vitest 4 writes them: a failed test also fails its describe
// and its file, so the suites vitest counts must not be added to the tests.
// Each file has vitest's start and end (its first test's start, its last
// test's end, in epoch milliseconds); the run started at RUN_START.

const folder = mkdtempSync(join(tmpdir(), "test-summary-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

type Status = "passed" | "failed" | "skipped";

const RUN_START = 1_800_000_000_000;

/** A file's span in the run, in seconds from its start. */
type Span = { from: number; to: number };

function testFile(name: string, status: Status, tests: Status[], message = "", span: Span = { from: 1, to: 2 }) {
  return {
    name: join(projectRoot, name),
    status,
    message,
    startTime: RUN_START + span.from * 1000,
    endTime: RUN_START + span.to * 1000,
    assertionResults: tests.map((test, index) => ({
      ancestorTitles: ["a describe"],
      fullName: `a describe test ${index}`,
      status: test,
    })),
  };
}

function summary(files: ReturnType<typeof testFile>[]): Promise<{ code: number; lines: string[]; timing: string[] }> {
  const tests = files.flatMap((file) => file.assertionResults);
  const count = (status: Status) => tests.filter((test) => test.status === status).length;
  const failedFiles = files.filter((file) => file.status === "failed").length;
  const results = {
    // vitest counts a failed file and each failed describe in it as failed suites.
    numFailedTestSuites: failedFiles * 2,
    numPassedTests: count("passed"),
    numFailedTests: count("failed"),
    numPendingTests: count("skipped"),
    numTodoTests: 0,
    startTime: RUN_START,
    testResults: files,
  };
  const path = join(folder, `results-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, JSON.stringify(results));
  return new Promise((resolve) => {
    execFile(process.execPath, ["scripts/test-summary.mjs", path], { cwd: projectRoot }, (error, stdout) => {
      // The wall time and the slowest files (indented) stand apart; each case checks the rest as it is.
      const all = stdout.trimEnd().split("\n");
      const isTiming = (line: string) => line.startsWith("wall time ") || line.startsWith("  ");
      resolve({
        code: error ? Number(error.code) : 0,
        lines: all.filter((line) => !isTiming(line)),
        timing: all.filter(isTiming),
      });
    });
  });
}

describe("scripts/test-summary.mjs", () => {
  it("counts one failed test once, not again through its file and its describe", async () => {
    const { code, lines } = await summary([
      testFile("test/a.test.ts", "failed", ["failed", "passed"]),
      testFile("test/b.test.ts", "passed", ["passed", "passed"]),
    ]);
    expect(lines).toEqual(["3 passed, 1 failed"]);
    expect(code).toBe(1);
  });

  it("counts a file that failed with no failed test once, as itself, and names it above the line", async () => {
    const { code, lines } = await summary([
      testFile("test/broken.test.ts", "failed", [], "Cannot find module './gone' imported from test/broken.test.ts"),
      testFile("test/hooked.test.ts", "failed", ["skipped"]),
      testFile("test/b.test.ts", "passed", ["passed"]),
    ]);
    expect(lines).toEqual([
      "failed outside any test: test/broken.test.ts: Cannot find module './gone' imported from test/broken.test.ts",
      "failed outside any test: test/hooked.test.ts: a hook failed or the file did not load; the log above says why",
      "1 passed, 2 failed (2 of them test files that failed outside any test), 1 skipped",
    ]);
    expect(code).toBe(1);
  });

  it("puts the wall time and the five slowest files, longest first, above the count line", async () => {
    const spans: [string, Span][] = [
      ["test/quick.test.ts", { from: 0, to: 1 }],
      ["test/matrix.test.ts", { from: 2, to: 360 }],
      ["test/budget.test.ts", { from: 1, to: 141.25 }],
      ["test/page.test.ts", { from: 400, to: 530 }],
      ["test/drift.test.ts", { from: 361, to: 456 }],
      ["test/resume.test.ts", { from: 142, to: 259 }],
      ["test/short.test.ts", { from: 530, to: 545.5 }],
    ];
    const { code, lines, timing } = await summary(
      spans.map(([name, span]) => testFile(name, "passed", ["passed"], "", span)),
    );
    expect(timing).toEqual([
      "wall time 545.5 s for 7 test files; the slowest:",
      "    358.0 s  test/matrix.test.ts",
      "    140.3 s  test/budget.test.ts",
      "    130.0 s  test/page.test.ts",
      "    117.0 s  test/resume.test.ts",
      "     95.0 s  test/drift.test.ts",
    ]);
    expect(lines).toEqual(["7 passed, 0 failed"]);
    expect(code).toBe(0);
  });

  it("passes a run with every test passed", async () => {
    const { code, lines } = await summary([testFile("test/b.test.ts", "passed", ["passed", "skipped"])]);
    expect(lines).toEqual(["1 passed, 0 failed, 1 skipped"]);
    expect(code).toBe(0);
  });
});
