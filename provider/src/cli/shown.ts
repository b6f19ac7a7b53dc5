import { isAbsolute, relative, resolve } from "node:path";

// How messages show file paths and long text. A pipeline checks out into
// deep folders (`/home/runner/work/<repo>/<repo>/...`): an absolute path can
// fill a line, and a message cut to a width then loses its end, which is
// where it says what to do.

/**
 * The shortest way to name `file` to the reader: relative to `folder` (the
 * inventory's, when the file names it from there), relative to the working
 * folder, or absolute.
 */
export function shownPath(file: string, folder = process.cwd()): string {
  const absolute = resolve(folder, file);
  const candidates = [absolute, relativeFrom(resolve(folder), absolute), relativeFrom(process.cwd(), absolute)];
  return candidates.reduce((shortest, candidate) => (candidate.length < shortest.length ? candidate : shortest));
}

/** On another drive (Windows) there is no relative path: the absolute one stands. */
function relativeFrom(folder: string, absolute: string): string {
  const path = relative(folder, absolute);
  return path === "" ? "." : isAbsolute(path) ? absolute : path;
}

/**
 * Text no longer than `width`: a longer one keeps its start and its end, the
 * middle replaced by `…`, so both what it is about and how it ends stay.
 */
export function shortened(text: string, width: number): string {
  if (text.length <= width) return text;
  const kept = width - 1;
  const head = Math.ceil(kept / 2);
  return `${text.slice(0, head)}…${text.slice(text.length - (kept - head))}`;
}

/** A path or argument as a command line to paste takes it: quoted when a shell would split or expand it. */
export function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}
