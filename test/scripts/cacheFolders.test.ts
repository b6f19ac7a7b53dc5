import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../../scripts/project.mjs";

// One cache rule: whatever is made from inputs and kept for the next run is
// an artefact (scripts/build/artefact.mjs: a digest of its inputs, a lock,
// a work folder renamed into place, grace for a copy in use, pruning). A
// folder of .cache/ the code names by hand is one of these, none of which is
// kept for its inputs; a cache of its own there would be a second rule.

/** The folders of .cache/ made by hand, and what each is instead of a cache. */
const NOT_CACHES: Record<string, string> = {
  projects: "a test's or the benchmark's project folder, made for one run of it",
  "fleet-backends": "a fleet test's own file backend, one per fleet",
  runs: "one run of the suite's folder, removed when it ends",
  vite: "Vitest's own record of each file's duration",
  reliability: "the reliability suite's figures, for its report",
  demo: "the demo's stack and DNS key",
  bench: "the benchmark's report",
  plugin: "`npm run plugin`'s output",
  sdk: "`npm run sdk`'s output",
  "pip-downloads": "pip's own download cache, as npm's and Go's are theirs",
  "test-results.json": "the last run's results, for the summary",
};

const SOURCES = ["scripts", "test", "bench/src", "vitest.config.mts"];
const CODE = /\.(ts|mts|mjs|cjs|js)$/;
/** A folder of .cache/ named in code: joined to the project's .cache or the artefacts' root, or as a path. */
const NAMED = [
  /join\(\s*projectRoot\s*,\s*"\.cache"\s*,\s*"([^"]+)"/g,
  /join\(\s*artefactRoot\s*,\s*"([^"]+)"/g,
  /["'`]\.cache\/([\w.-]+)/g,
];

function codeFiles(path: string): string[] {
  const full = join(projectRoot, path);
  if (CODE.test(path)) return [full];
  return readdirSync(full, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && CODE.test(entry.name) && !entry.parentPath.includes("node_modules"))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe(".cache/", () => {
  it("holds no folder the code makes by hand but those that are no cache: every cache is an artefact", () => {
    const named = SOURCES.flatMap(codeFiles).flatMap((file) => {
      const text = readFileSync(file, "utf8");
      return NAMED.flatMap((pattern) => [...text.matchAll(pattern)].map((match) => ({ file, folder: match[1] })));
    });
    const unknown = named
      .filter(({ folder }) => folder !== undefined && !(folder in NOT_CACHES))
      .map(({ file, folder }) => `${relative(projectRoot, file)}: .cache/${folder}`);
    expect(unknown, "make it an artefact (ensureArtefact), or say in NOT_CACHES why it is no cache").toEqual([]);
    // Each exception is still named somewhere, so the list cannot keep a folder nothing makes.
    expect(Object.keys(NOT_CACHES).filter((folder) => !named.some((found) => found.folder === folder))).toEqual([]);
  });
});
