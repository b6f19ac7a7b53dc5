import type { Writable } from "node:stream";
import { shownPath } from "../cli/shown";
import type { ShardResult } from "./result";

export interface ProgressSink {
  started(shard: string, operation: string): void;
  finished(result: ShardResult): void;
  note(shard: string, message: string): void;
  close(): void;
}

function changedCount(changes: Record<string, number>): number {
  return Object.entries(changes)
    .filter(([kind]) => kind !== "same")
    .reduce((sum, [, count]) => sum + count, 0);
}

/** Seconds as people read them: `45s`, `12m05s`; `?` when not known yet. */
export function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return "?";
  const whole = Math.round(seconds);
  return whole >= 60 ? `${Math.floor(whole / 60)}m${String(whole % 60).padStart(2, "0")}s` : `${whole}s`;
}

/**
 * On a terminal: one status line rewritten in place (queued, running, done,
 * failed, resources changed, elapsed, an estimate of the rest from the mean
 * time of the shards done so far). Elsewhere (CI): one plain line per event.
 */
export function progressSink(stream: Writable & { isTTY?: boolean }, total: number): ProgressSink {
  const startedAt = Date.now();
  const running = new Set<string>();
  let done = 0;
  let failed = 0;
  let changed = 0;
  let shardSeconds = 0;
  const tty = stream.isTTY === true;
  const status = () => {
    const elapsed = (Date.now() - startedAt) / 1000;
    const finished = done + failed;
    const queued = total - finished - running.size;
    const remaining = queued + running.size;
    const perShard = finished === 0 ? Number.NaN : shardSeconds / finished;
    const eta = remaining === 0 ? 0 : (perShard * remaining) / Math.max(1, running.size);
    return `shards: ${queued} queued, ${running.size} running, ${done} done, ${failed} failed · ${changed} resources changed · ${duration(elapsed)} elapsed · ~${duration(eta)} left`;
  };
  const line = (text: string) => {
    if (tty) stream.write(`\r\x1b[2K${text}\n${status()}`);
    else stream.write(`${text}\n`);
  };
  return {
    started(shard, operation) {
      running.add(shard);
      line(`${shard}: ${operation} started`);
    },
    finished(result) {
      running.delete(result.shard);
      if (result.status === "failed") failed++;
      else done++;
      changed += changedCount(result.changes);
      shardSeconds += result.seconds;
      const detail =
        result.status === "failed"
          ? `failed: ${result.error ?? "unknown error"}`
          : result.status === "skipped"
            ? `skipped (${result.reason ?? "unchanged"})`
            : `${result.status}, ${changedCount(result.changes)} changed${result.removed ? ", stack removed" : ""}`;
      line(`${result.shard}: ${result.operation} ${detail} in ${duration(result.seconds)}`);
    },
    note(shard, message) {
      line(`${shard}: ${message}`);
    },
    close() {
      if (tty) stream.write(`\r\x1b[2K${status()}\n`);
    },
  };
}

/** The summary table: one row per shard, failed ones with their first error line and log file. */
export function summaryTable(results: readonly ShardResult[]): string {
  const rows = results.map((result) => [
    result.shard,
    result.operation,
    result.status,
    String(result.tenants),
    Object.entries(result.changes)
      .filter(([kind, count]) => kind !== "same" && count > 0)
      .map(([kind, count]) => `${kind} ${count}`)
      .join(", ") || "-",
    duration(result.seconds),
  ]);
  const header = ["shard", "operation", "status", "tenants", "changes", "time"];
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)),
  );
  const format = (row: string[]) =>
    row
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join("  ")
      .trimEnd();
  const lines = [format(header), format(widths.map((width) => "-".repeat(width))), ...rows.map(format)];
  const failures = results.filter((result) => result.status === "failed");
  if (failures.length > 0) {
    lines.push("", `${failures.length} shard(s) failed:`);
    for (const failure of failures) {
      lines.push(
        `  ${failure.shard}: ${failure.error ?? "unknown error"} (log: ${failure.log === undefined ? "none" : shownPath(failure.log)})`,
      );
      for (const line of failure.unsettled ?? []) lines.push(`    ${line}`);
    }
  }
  for (const result of results)
    if (result.recovered) lines.push(`${result.shard} was recovered first: ${result.recovered}`);
  return lines.join("\n");
}
