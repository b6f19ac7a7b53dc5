import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "examples/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Engine tests spawn the Pulumi CLI and its plugins; two cores run two files at a time.
    maxWorkers: 2,
  },
});
