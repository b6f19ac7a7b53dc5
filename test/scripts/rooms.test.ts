import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../../scripts/project.mjs";

// scripts/ as CONTRIBUTING's "scripts/, by what it makes" describes it: a
// folder per thing the build makes, each named there, and no file longer
// than a reader takes in at once.

const scripts = join(projectRoot, "scripts");
const MOST_LINES = 300;
/** Written by a tool, not read as a script is. */
const GENERATED = /(^|\/)go\.sum$/;

const files = readdirSync(scripts, { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile())
  .map((entry) => relative(scripts, join(entry.parentPath, entry.name)));

describe("scripts/", () => {
  it(`holds no file over ${MOST_LINES} lines but what a tool writes`, () => {
    const long = files
      .filter((file) => !GENERATED.test(file))
      .map((file) => ({ file, lines: readFileSync(join(scripts, file), "utf8").trimEnd().split("\n").length }))
      .filter(({ lines }) => lines > MOST_LINES)
      .map(({ file, lines }) => `scripts/${file}: ${lines} lines`);
    expect(long).toEqual([]);
  });

  it("has the folders CONTRIBUTING's table names, each saying what it makes", () => {
    const text = readFileSync(join(projectRoot, "CONTRIBUTING.md"), "utf8");
    const start = text.indexOf("### scripts/, by what it makes");
    const section = text.slice(start, text.indexOf("\n### ", start + 1));
    const named = [...section.matchAll(/^\| `scripts\/([a-z-]+)\/` +\| \S/gm)].map((match) => match[1]);
    const folders = readdirSync(scripts, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(named.sort()).toEqual(folders.sort());
  });
});
