// Prints `N passed, N failed[, N skipped]` from vitest's JSON reporter output,
// the line CI reads, last. It counts tests: vitest's failed suites are the
// file and every describe around a failed test, so adding them would count one
// failure three times. A test file that failed with no failed test (it did not
// load, or a hook failed) counts once, as itself, and is named above the line.
// Exits non-zero when the results are missing or failing.
import { readFileSync } from "node:fs";
import { relative } from "node:path";

const file = process.argv[2];
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
/** The file the shorter way: from the working folder, or absolute. */
function shown(path) {
  const fromHere = relative(process.cwd(), path);
  return fromHere.length < path.length ? fromHere : path;
}

for (const result of failedAlone) {
  const why =
    (result.message ?? "").split("\n")[0].trim() || "a hook failed or the file did not load; the log above says why";
  console.log(`failed outside any test: ${shown(result.name)}: ${why}`);
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
