import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { projectRoot } from "../../scripts/project.mjs";

// Just enough of Markdown, as GitHub renders it, to check the documentation:
// where its links point, which anchors its headings make, and its tables.

/** The files of the repository as a clone has them: tracked, or new and not ignored by git. */
export function repositoryFiles(): Set<string> {
  const listing = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "-z"], {
    cwd: projectRoot,
    encoding: "utf8",
  });
  return new Set(listing.split("\0").filter((path) => path !== ""));
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/**
 * The text with fenced code blocks and code spans blanked out (their
 * characters replaced by spaces, line breaks kept), so nothing in code
 * counts as a link or a heading and line numbers stay right.
 */
function proseOf(text: string): string {
  const lines = text.split("\n");
  let fence: string | undefined;
  const prose = lines.map((line) => {
    const opening = FENCE.exec(line)?.[1];
    if (fence === undefined && opening) {
      fence = opening;
      return "";
    }
    if (fence !== undefined) {
      const closing = new RegExp(`^ {0,3}${fence[0] === "`" ? "`" : "~"}{${fence.length},}\\s*$`);
      if (closing.test(line)) fence = undefined;
      return "";
    }
    return line;
  });
  // A code span never crosses a blank line, so each paragraph is blanked on its own.
  return prose
    .join("\n")
    .split(/(\n[ \t]*\n)/)
    .map((paragraph) => paragraph.replace(/(`+)(?!`)[\s\S]*?[^`]\1(?!`)/g, (span) => span.replace(/[^\n]/g, " ")))
    .join("");
}

/** GitHub's anchor for a heading's text: lower case, punctuation dropped, spaces to hyphens. */
function slugOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]*>/g, "")
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** Every anchor a Markdown text offers: its headings' (repeats numbered as GitHub does) and explicit `<a id>`/`<a name>`. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of text.split("\n")) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = slugOf(heading);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  for (const match of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1] as string);
  return anchors;
}

/** Headings need the raw text (their code spans count), but not those inside code blocks. */
export function anchorsOfFile(path: string): Set<string> {
  const text = readFileSync(path, "utf8");
  const lines = text.split("\n");
  const blanked = proseOf(text).split("\n");
  return anchorsOf(lines.map((line, index) => ((blanked[index] ?? "").trim() === "" ? "" : line)).join("\n"));
}

export interface Link {
  /** The destination as written: a path, a path with `#anchor`, or `#anchor`. */
  target: string;
  /** 1-based line of the text where it is. */
  line: number;
}

/** Every link and image destination of a Markdown text: inline ones, and reference definitions. */
export function linksOf(text: string): Link[] {
  const prose = proseOf(text);
  const lineAt = (index: number) => prose.slice(0, index).split("\n").length;
  const inline = [...prose.matchAll(/!?\[[^\]]*\]\(\s*(<[^>]*>|[^\s)]+)(?:\s+"[^"]*")?\s*\)/g)].map((match) => ({
    target: (match[1] as string).replace(/^<|>$/g, ""),
    line: lineAt(match.index + match[0].indexOf("](")),
  }));
  const definitions = [...prose.matchAll(/^ {0,3}\[[^\]]+\]:\s*(\S+)/gm)].map((match) => ({
    target: (match[1] as string).replace(/^<|>$/g, ""),
    line: lineAt(match.index),
  }));
  return [...inline, ...definitions].sort((a, b) => a.line - b.line);
}

/** The rows of the first table after the heading whose text is `heading`, as trimmed cells, header and delimiter left out. */
export function tableAfter(text: string, heading: string): string[][] {
  const lines = text.split("\n");
  const start = lines.findIndex((line) => /^#{1,6}\s/.test(line) && line.replace(/^#+\s+/, "").trim() === heading);
  if (start === -1) throw new Error(`no heading "${heading}"`);
  const first = lines.findIndex((line, index) => index > start && line.startsWith("|"));
  if (first === -1) throw new Error(`no table after the heading "${heading}"`);
  const rows: string[][] = [];
  for (let index = first + 2; index < lines.length && lines[index]?.startsWith("|"); index++) {
    const cells = (lines[index] as string)
      .replace(/^\||\|\s*$/g, "")
      .split(/(?<!\\)\|/)
      .map((cell) => cell.trim());
    rows.push(cells);
  }
  return rows;
}

/** A file's text by its path in the repository. */
export function readDoc(path: string): string {
  return readFileSync(join(projectRoot, path), "utf8");
}
