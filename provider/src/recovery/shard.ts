import type { Interruption } from "../checkpoint/interruption";
import { type RecoveryReport, recoverStack } from "./recover";
import { formatReport } from "./report";
import { SETTLEMENT_WORDS } from "./settlementWords";

/**
 * The fleet's one call into the recovery command (`dmarc-recover`): settles
 * a shard stack an interrupted run left behind (its lock, its pending
 * operations) so the next run neither fails on the lock nor duplicates a
 * create. The runner decides when a shard needs it; the recovery decides how.
 */
export type StackRecovery = (target: RecoveryTarget) => Promise<ShardRecoveryResult>;

export interface RecoveryTarget {
  stackName: string;
  /** A folder with the shard's Pulumi.yaml (project and backend) and the project's node_modules. */
  workDir: string;
  /** Environment for the Pulumi CLI: backend, passphrase, PULUMI_HOME. */
  env: Record<string, string>;
  /** Why the runner thinks the stack needs it. */
  reason: Interruption;
}

export interface ShardRecoveryResult {
  /** One line for the fleet's report, e.g. "adopted 3, dropped 1". */
  summary: string;
}

/** "removed 1 dead lock, adopted 2, dropped 1": what the recovery did, for the fleet's report. */
function summaryOf(report: RecoveryReport): string {
  const counts = new Map<string, number>();
  for (const { action } of report.steps) {
    const { tally } = SETTLEMENT_WORDS[action];
    counts.set(tally, (counts.get(tally) ?? 0) + 1);
  }
  const parts = [
    ...(report.orphans.length > 0 ? [`stopped ${report.orphans.length} process(es) of a killed run`] : []),
    ...(report.deadLocks.length > 0 ? [`removed ${report.deadLocks.length} lock(s) of a dead run`] : []),
    ...(report.checkpoint ? ["repaired the checkpoint"] : []),
    ...[...counts].map(([action, count]) => `${action} ${count}`),
  ];
  return parts.length > 0 ? parts.join(", ") : "nothing to recover";
}

/**
 * The recovery command (`dmarc-recover`) as the fleet's {@link StackRecovery}:
 * a shard it cannot settle (a live run holds it, or operations are left for a
 * person) fails with the command's own report. With `unlockOtherHosts`, a
 * lock taken on another host is taken for a dead run's, as a CI job run
 * again on a new runner needs when its workflow lets one run deploy at a time.
 */
export function shardRecovery(options: { unlockOtherHosts?: boolean } = {}): StackRecovery {
  return async ({ stackName, workDir, env }) => {
    const report = await recoverStack({ stackName, workDir, env, ...options });
    if (report.exitCode !== 0) throw new Error(formatReport(report).join("\n"));
    return { summary: summaryOf(report) };
  };
}

export const recoverShard: StackRecovery = shardRecovery();
