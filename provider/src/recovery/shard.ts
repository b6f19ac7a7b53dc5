import type { Deployment } from "@pulumi/pulumi/automation";
import { signLine } from "./interruption";
import type { SettlementAction } from "./plan";
import { type RecoveryReport, recoverStack } from "./recover";
import { formatReport } from "./report";

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

export type Interruption =
  | { kind: "pendingOperations"; operations: { type: string; urn: string }[] }
  | { kind: "locked"; message: string };

/** The pending operations a killed run left in the shard's state, or undefined when there are none. */
export function pendingOperationsOf(deployment: Deployment): Interruption | undefined {
  const pending = (deployment.deployment as { pending_operations?: { type: string; resource: { urn: string } }[] })
    .pending_operations;
  if (!pending || pending.length === 0) return undefined;
  return {
    kind: "pendingOperations",
    operations: pending.map((operation) => ({ type: operation.type, urn: operation.resource.urn })),
  };
}

/** A run refused because another run holds (or a dead one left) the stack's lock. */
export function lockOf(error: unknown): Interruption | undefined {
  const line = signLine(error, "locked");
  return line ? { kind: "locked", message: line } : undefined;
}

/** One line for progress and status: `1 pending operation(s)`, or `locked: <the engine's line>`. */
export function interruptionSummary(interruption: Interruption): string {
  return interruption.kind === "locked"
    ? `locked: ${interruption.message}`
    : `${interruption.operations.length} pending operation(s)`;
}

/** What to tell the user when no recovery is wired in. */
export function recoveryHint(stackName: string, interruption: Interruption): string {
  const what =
    interruption.kind === "locked"
      ? `is locked (${interruption.message})`
      : `was interrupted with ${interruption.operations.length} pending operation(s)`;
  return `stack ${stackName} ${what}: run \`npx dmarc-recover --stack ${stackName}\` in its work folder, then rerun the fleet`;
}

const SETTLED_AS: Record<SettlementAction, string> = {
  adopt: "adopted",
  recreate: "recreated",
  drop: "dropped",
  refresh: "refreshed",
  unsettled: "left unsettled",
  duplicate: "found duplicated",
};

/** "removed 1 dead lock, adopted 2, dropped 1": what the recovery did, for the fleet's report. */
function summaryOf(report: RecoveryReport): string {
  const counts = new Map<string, number>();
  for (const step of report.steps) counts.set(SETTLED_AS[step.action], (counts.get(SETTLED_AS[step.action]) ?? 0) + 1);
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
 * person) fails with the command's own report.
 */
export const recoverShard: StackRecovery = async ({ stackName, workDir, env }) => {
  const report = await recoverStack({ stackName, workDir, env });
  if (report.exitCode !== 0) throw new Error(formatReport(report).join("\n"));
  return { summary: summaryOf(report) };
};
