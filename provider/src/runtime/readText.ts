import { readFileSync } from "node:fs";

/** A file's text, or undefined where it cannot be read: missing, unreadable, or a process's entry that is gone. */
export function readTextIfAny(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}
