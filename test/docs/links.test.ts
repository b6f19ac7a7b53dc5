import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../../scripts/project.mjs";
import { anchorsOfFile, type Link, linksOf, repositoryFiles } from "./markdown";

// Every relative link of the documentation, and every link to a file of
// the repository by its GitHub address, points at a file of the
// repository (tracked, or new and not ignored: a link to a build output
// would work here and nowhere else), and every #anchor at a heading of the
// Markdown file it names. A failure names the file, the line and the link.

const files = [...repositoryFiles()];
const inRepository = new Set(files);
/** Every folder holding a file of the repository: a link may name a folder (GitHub lists it). */
const folders = new Set(
  files.flatMap((file) => {
    const parts = file.split("/").slice(0, -1);
    return parts.map((_, index) => parts.slice(0, index + 1).join("/"));
  }),
);
const documentation = files
  .filter((file) => ["README.md", "CONTRIBUTING.md", "CHANGELOG.md"].includes(file) || /^docs\/.+\.md$/.test(file))
  .sort();

/** The reference pages are generated (`npm run docs`); until they exist, links into them are checked apart. */
const GENERATED = "docs/resources/";
const generatedPagesExist = existsSync(join(projectRoot, GENERATED, "README.md"));

const isExternal = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//");

/** The repository's address, from provider/package.json: the Registry's pages, shown on another site, link into it. */
const repositoryAddress = JSON.parse(readFileSync(join(projectRoot, "provider", "package.json"), "utf8"))
  .repository.url.replace(/^git\+/, "")
  .replace(/\.git$/, "");

/** A link to a file of the repository's default branch by its address, as one relative to `file`; other links as written. */
function asRelative(file: string, target: string): string {
  const prefix = `${repositoryAddress}/blob/main/`;
  if (!target.startsWith(prefix)) return target;
  return relative(dirname(file), target.slice(prefix.length)) || ".";
}

/** The repository path a link of `file` points at (`file` itself for `#anchor`), and its anchor. */
function destinationOf(file: string, link: Link): { path: string; anchor: string | undefined } {
  const [written = "", anchor] = link.target.split("#", 2);
  const path =
    written === "" ? file : relative(projectRoot, resolve(projectRoot, dirname(file), decodeURIComponent(written)));
  return { path, anchor };
}

/** What is wrong with one link of `file`, or undefined when it resolves. */
function problemOf(file: string, link: Link): string | undefined {
  const { path, anchor } = destinationOf(file, link);
  const where = `${file}:${link.line}: ${link.target}`;
  if (path.startsWith("..")) return `${where}: points outside the repository`;
  const isFolder = folders.has(path);
  if (!inRepository.has(path) && !isFolder)
    return `${where}: ${path} is not a file of the repository (missing, or ignored by git)`;
  if (anchor === undefined || isFolder || !path.endsWith(".md")) return undefined;
  const absolute = join(projectRoot, path);
  if (!existsSync(absolute) || !statSync(absolute).isFile()) return `${where}: ${path} cannot be read`;
  return anchorsOfFile(absolute).has(anchor) ? undefined : `${where}: ${path} has no heading for #${anchor}`;
}

/** The links of `text`, the text of `file`, that lead into the repository. */
function repositoryLinksOf(file: string, text: string): Link[] {
  return linksOf(text)
    .map((link) => ({ ...link, target: asRelative(file, link.target) }))
    .filter((link) => !isExternal(link.target));
}

const linksIn = (file: string) => repositoryLinksOf(file, readFileSync(join(projectRoot, file), "utf8"));

/** A link from outside the generated pages into them. */
const intoGenerated = (file: string, link: Link) =>
  !file.startsWith(GENERATED) && destinationOf(file, link).path.startsWith(GENERATED);

describe("the documentation's links", () => {
  it("covers the root README, CONTRIBUTING, CHANGELOG and docs/", () => {
    expect(documentation).toEqual(
      expect.arrayContaining(["README.md", "CONTRIBUTING.md", "CHANGELOG.md", "docs/README.md"]),
    );
  });

  it.each(documentation)("%s: every relative link resolves", (file) => {
    const problems = linksIn(file)
      .filter((link) => !intoGenerated(file, link))
      .flatMap((link) => problemOf(file, link) ?? []);
    expect(problems).toEqual([]);
  });

  it.skipIf(!generatedPagesExist)("every link into the generated reference pages resolves", () => {
    const problems = documentation.flatMap((file) =>
      linksIn(file)
        .filter((link) => intoGenerated(file, link))
        .flatMap((link) => problemOf(file, link) ?? []),
    );
    expect(problems).toEqual([]);
  });

  it("reports a missing file, a missing heading, and a link leaving the repository, also by its address; ignores code", () => {
    const text = [
      "See [the index](docs/README.md#no-such-heading), [gone](docs/no-such-page.md),",
      "[outside](../elsewhere.md) and [fine](CONTRIBUTING.md#architecture).",
      "```md",
      "[in a code block](no-such-file.md)",
      "```",
      "and `[in a code span](no-such-file.md)`.",
      `By address: [gone](${repositoryAddress}/blob/main/docs/gone.md), [fine](${repositoryAddress}/blob/main/docs/README.md).`,
    ].join("\n");
    const problems = repositoryLinksOf("README.md", text).flatMap((link) => problemOf("README.md", link) ?? []);
    expect(problems).toEqual([
      "README.md:1: docs/README.md#no-such-heading: docs/README.md has no heading for #no-such-heading",
      "README.md:1: docs/no-such-page.md: docs/no-such-page.md is not a file of the repository (missing, or ignored by git)",
      "README.md:2: ../elsewhere.md: points outside the repository",
      "README.md:7: docs/gone.md: docs/gone.md is not a file of the repository (missing, or ignored by git)",
    ]);
  });
});
