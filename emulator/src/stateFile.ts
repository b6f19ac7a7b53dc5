import { existsSync, readFileSync } from "node:fs";
import { rename, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { Logger } from "pino";
import type { StateSnapshot } from "./store";

/** The saved state, or undefined for a first start; fails the start on a file it cannot use. */
export function readStateFile(path: string): StateSnapshot | undefined {
  if (!existsSync(dirname(path))) throw new Error(`the state file's directory ${dirname(path)} does not exist`);
  if (!existsSync(path)) return undefined;
  let snapshot: StateSnapshot;
  try {
    snapshot = JSON.parse(readFileSync(path, "utf8")) as StateSnapshot;
  } catch (error) {
    throw new Error(`cannot read the state file ${path}: ${(error as Error).message}`);
  }
  if (snapshot.version !== 1) throw new Error(`the state file ${path} has unknown version ${String(snapshot.version)}`);
  return snapshot;
}

/**
 * Writes the state after changes, one write at a time, coalescing bursts of
 * changes into the next write. Each write goes to a temporary file renamed
 * over the old one, so a crash never leaves a half-written state file.
 */
export class StateFileWriter {
  private writing: Promise<void> | undefined;
  private dirty = false;

  constructor(
    private readonly path: string,
    private readonly snapshot: () => StateSnapshot,
    private readonly log: Logger,
  ) {}

  schedule(): void {
    this.dirty = true;
    this.writing ??= this.drain();
  }

  /** Resolves once every change reported so far is on disk. */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async drain(): Promise<void> {
    while (this.dirty) {
      this.dirty = false;
      const temporary = `${this.path}.${process.pid}.tmp`;
      try {
        await writeFile(temporary, JSON.stringify(this.snapshot()));
        await rename(temporary, this.path);
      } catch (error) {
        this.log.error({ err: error, path: this.path }, "cannot write the state file");
      }
    }
    this.writing = undefined;
  }
}
