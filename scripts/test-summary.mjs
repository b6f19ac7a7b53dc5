// Prints `N passed, N failed[, N skipped]` from vitest's JSON reporter output,
// the line CI reads, last. Above it: the run's wall time and its five slowest
// files, so the commit that makes the suite slower shows it (a file's time is
// vitest's: from its first test's start to its last test's end). It counts
// tests: vitest's failed suites are the file and every describe around a
// failed test, so adding them would count one failure three times. A test
// file that failed with no failed test (it did not load, or a hook failed)
// counts once, as itself, and is named above the line.
// Exits non-zero when the results are missing or failing.
import { readFileSync } from "node:fs";
import { relative } from "node:path";

const file = process.argv[2];
const SLOWEST_SHOWN = 5;
let results;
try {
  results = JSON.parse(readFileSync(file, "utf8"));
} catch (error) {
  console.error(`no test results at ${file}: ${error.message}`);
  process.exit(1);
}

const files = results.testResults ?? [];
const failedTests = files.flatMap((result) => result.assertionResults ?? []).filter((test) => test.status === "failed");
const failedAlone = files.filter(
  (result) => result.status === "failed" && !(result.assertionResults ?? []).some((test) => test.status === "failed"),
);
/**
 * The file from the project's root (`test/...`, `examples/...`): .ci/run
 * reads the results of a clone at a long path elsewhere; else from the
 * working folder, or absolute.
 */
function shown(path) {
  const inProject = /[\\/]((?:test|examples)[\\/].*)$/.exec(path)?.[1];
  if (inProject) return inProject;
  const fromHere = relative(process.cwd(), path);
  return fromHere.length < path.length ? fromHere : path;
}

for (const result of failedAlone) {
  const why =
    (result.message ?? "").split("\n")[0].trim() || "a hook failed or the file did not load; the log above says why";
  console.log(`failed outside any test: ${shown(result.name)}: ${why}`);
}

/** Seconds, one decimal, from milliseconds. */
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
const timed = files.filter((result) => Number.isFinite(result.startTime) && Number.isFinite(result.endTime));
if (timed.length > 0) {
  const lastEnd = Math.max(...timed.map((result) => result.endTime));
  const start = results.startTime ?? Math.min(...timed.map((result) => result.startTime));
  console.log(`wall time ${seconds(lastEnd - start)} for ${files.length} test files; the slowest:`);
  const slowest = [...timed]
    .sort((a, b) => b.endTime - b.startTime - (a.endTime - a.startTime))
    .slice(0, SLOWEST_SHOWN);
  for (const result of slowest)
    console.log(`  ${seconds(result.endTime - result.startTime).padStart(9)}  ${shown(result.name)}`);
}

const passed = results.numPassedTests ?? 0;
const failed = (results.numFailedTests ?? failedTests.length) + failedAlone.length;
const skipped = (results.numPendingTests ?? 0) + (results.numTodoTests ?? 0);
const alone =
  failedAlone.length === 0
    ? ""
    : ` (${failedAlone.length} of them ${failedAlone.length === 1 ? "a test file that" : "test files that"} failed outside any test)`;
console.log(`${passed} passed, ${failed} failed${alone}${skipped > 0 ? `, ${skipped} skipped` : ""}`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
