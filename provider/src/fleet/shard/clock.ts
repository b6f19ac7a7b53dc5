import type { EngineEvent, OpMap } from "@pulumi/pulumi/automation";
import { isProviderType } from "../../checkpoint/deployment";
import type { ShardTiming } from "../result";

/**
 * What the engine's events said of one operation: when it reached its first
 * step on a provider's resource and its summary, on `performance.now()`'s
 * clock, and the summary's change counts.
 */
export interface OperationMarks {
  firstStepAt?: number;
  summaryAt?: number;
  changes?: OpMap;
}

/** Records the {@link OperationMarks} of the operation whose events it is given. */
export function marking(marks: OperationMarks): (event: EngineEvent) => void {
  return (event) => {
    const step = event.resourcePreEvent?.metadata;
    const custom = (step?.new ?? step?.old)?.custom === true && !isProviderType(step?.type ?? "");
    if (custom && marks.firstStepAt === undefined) marks.firstStepAt = performance.now();
    if (event.summaryEvent) {
      marks.summaryAt = performance.now();
      marks.changes = event.summaryEvent.resourceChanges;
    }
  };
}

/** Consecutive parts of one shard's run, timed one after the other, so they add up to its wall time. */
export class ShardClock {
  private readonly timing: ShardTiming = {
    recoverySeconds: 0,
    stackSeconds: 0,
    configSeconds: 0,
    startupSeconds: 0,
    stepsSeconds: 0,
    finishSeconds: 0,
    removeSeconds: 0,
  };
  private last = performance.now();

  /** Adds the time from the end of the previous part until `at` (default now) to `part`. */
  lap(part: keyof ShardTiming, at = performance.now()): void {
    this.timing[part] += Math.max(0, at - this.last) / 1000;
    this.last = Math.max(this.last, at);
  }

  /** Splits the operation that just ended at the engine events it saw. */
  lapOperation(marks: OperationMarks): void {
    this.lap("startupSeconds", marks.firstStepAt);
    if (marks.firstStepAt !== undefined) this.lap("stepsSeconds", marks.summaryAt);
    this.lap("finishSeconds");
  }

  rounded(): ShardTiming {
    const entries = Object.entries(this.timing).map(([part, seconds]) => [part, Math.round(seconds * 1000) / 1000]);
    return Object.fromEntries(entries) as unknown as ShardTiming;
  }
}
