import { defineConfig } from "vitest/config";

export default defineConfig({
  // Vitest keeps each file's last duration in <cacheDir>/vitest and runs the longest files first, so the
  // workers finish together instead of one long file running alone at the end. In .cache/, not node_modules/,
  // so that `npm ci` keeps it and .ci/run's clone shares it with the checkout.
  cacheDir: ".cache/vite",
  test: {
    include: ["test/**/*.test.ts", "examples/**/*.test.ts"],
    globalSetup: ["test/support/runFolder.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Engine tests spawn the Pulumi CLI and its plugins, and the rate-limited ones mostly wait on the service's
    // pace: with two files at a time the two cores were 74% busy over a whole run, with three 88% (process
    // accounting of `.ci/run`), and the run 100 s shorter.
    maxWorkers: 3,
  },
});
