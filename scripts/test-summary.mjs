// Prints `N passed, N failed[, N skipped]` from vitest's JSON reporter output,
// the line CI reads. Exits non-zero when the results are missing or failing.
import { readFileSync } from "node:fs";

const file = process.argv[2];
let results;
try {
  results = JSON.parse(readFileSync(file, "utf8"));
} catch (error) {
  console.error(`no test results at ${file}: ${error.message}`);
  process.exit(1);
}
const passed = results.numPassedTests ?? 0;
const failed = (results.numFailedTests ?? 0) + (results.numFailedTestSuites ?? 0);
const skipped = (results.numPendingTests ?? 0) + (results.numTodoTests ?? 0);
console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
