import {
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { platform, tmpdir } from "node:os";
import { join } from "node:path";
import type { BudgetStore } from "./budgetStore";

// The budget of the runs of one user on one machine: two pipelines on one
// self-hosted runner, a developer's laptop. One small file per partner holds when its
// next turn may start, changed under a lock file, so any process of the
// machine books in the same place whatever its working folder, temporary
// folder or state backend. The lock is held for a read and a write; a
// process that dies holding it leaves it to be taken over, and one that dies
// between turns holds nothing.

/**
 * One folder for the whole machine, not the process's temporary one:
 * runners give each job its own TMPDIR, and those jobs must still meet.
 */
export function machineBudgetFolder(): string {
  return platform() === "win32" ? join(tmpdir(), "dmarc-partner-budget") : "/tmp/dmarc-partner-budget";
}

/** A lock held longer than this belongs to a process that stopped mid-booking (a booking takes microseconds). */
const STALE_LOCK_MS = 5_000;
/** How long a booking waits for the lock, in tries a few milliseconds apart, before it gives up on the store. */
const LOCK_TRIES = 2_000;
const LOCK_RETRY_MS = 3;

export class MachineBudget implements BudgetStore {
  readonly kind = "machine";
  readonly where: string;
  private readonly nextTurnFile: string;
  private readonly lockFile: string;

  constructor(folder: string | undefined, partner: string) {
    const base = folder ?? machineBudgetFolder();
    this.where = base;
    this.nextTurnFile = join(base, `${partner}.next`);
    this.lockFile = join(base, `${partner}.lock`);
  }

  async book(intervalMs: number): Promise<number> {
    await this.lock();
    try {
      const now = Date.now();
      const turn = Math.max(now, this.readNextTurn());
      const written = `${this.nextTurnFile}.${process.pid}`;
      const fd = openSync(written, "w");
      try {
        writeSync(fd, String(turn + intervalMs));
      } finally {
        closeSync(fd);
      }
      renameSync(written, this.nextTurnFile);
      return turn - now;
    } finally {
      // The folder removed under the booking took the lock with it.
      rmSync(this.lockFile, { force: true });
    }
  }

  async close(): Promise<void> {}

  private readNextTurn(): number {
    try {
      const value = Number(readFileSync(this.nextTurnFile, "utf8"));
      return Number.isFinite(value) ? value : 0;
    } catch {
      return 0;
    }
  }

  private async lock(): Promise<void> {
    mkdirSync(this.where, { recursive: true });
    for (let attempt = 0; attempt < LOCK_TRIES; attempt += 1) {
      try {
        const fd = openSync(this.lockFile, "wx");
        writeSync(fd, String(process.pid));
        closeSync(fd);
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      if (this.lockIsStale()) {
        try {
          unlinkSync(this.lockFile);
        } catch {}
        continue;
      }
      await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
    }
    throw new Error(`the lock ${this.lockFile} stayed taken`);
  }

  /** The lock's process is gone, or it has held the lock far longer than a booking takes. */
  private lockIsStale(): boolean {
    try {
      const holder = Number(readFileSync(this.lockFile, "utf8"));
      if (Number.isInteger(holder) && holder > 0 && !isAlive(holder)) return true;
      return Date.now() - statSync(this.lockFile).mtimeMs > STALE_LOCK_MS;
    } catch {
      return false;
    }
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, another user's.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
