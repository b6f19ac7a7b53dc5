import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { processSharingFiles } from "./test/support/processSharing";

const root = fileURLToPath(new URL(".", import.meta.url));
const include = ["test/**/*.test.ts", "examples/**/*.test.ts"];
// Files that start no engine in their process and change nothing global share one process per worker
// (test/support/processSharing.ts says which); the others get a process each.
const sharing = processSharingFiles(root, ["test", "examples"]);

const common = { testTimeout: 30_000, hookTimeout: 120_000 };

export default defineConfig({
  // Vitest keeps each file's last duration in <cacheDir>/vitest and runs the longest files first, so the
  // workers finish together instead of one long file running alone at the end. In .cache/, not node_modules/,
  // so that `npm ci` keeps it and .ci/run's clone shares it with the checkout.
  cacheDir: ".cache/vite",
  test: {
    globalSetup: ["test/support/runFolder.ts"],
    // Engine tests spawn the Pulumi CLI and its plugins, and the rate-limited ones mostly wait on the service's
    // pace: with two files at a time the two cores were 74% busy over a whole run, with three 88% (process
    // accounting of `.ci/run`), and the run 100 s shorter.
    maxWorkers: 3,
    projects: [
      { test: { ...common, name: "shared process", include: sharing, isolate: false } },
      { test: { ...common, name: "own process", include, exclude: [...sharing, "**/node_modules/**"] } },
    ],
  },
});
