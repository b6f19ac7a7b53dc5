import { urnStack } from "../checkpoint/deployment";
import type { Interruption } from "../checkpoint/interruption";
import type { PersonsDecisions } from "./plan";
import { EXIT_CODES, type RecoveryReport, recoverStack } from "./recover";
import { formatReport, SETTLEMENT_WORDS } from "./report";

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
 * A shard its recovery did not settle, with the recovery's report: a live
 * run holds it, or (`needsPerson`) operations are left that a person
 * settles, each listed with the objects found and the command to type.
 */
export class ShardNotRecovered extends Error {
  override name = "ShardNotRecovered";
  constructor(
    readonly report: readonly string[],
    readonly needsPerson: boolean,
  ) {
    super(report.join("\n"));
  }
}

/** How a fleet recovers its shards: the options of `dmarc-recover` it passes on, and the command that reruns it. */
export interface ShardRecoveryOptions {
  /** A lock taken on another host is taken for a dead run's (`--unlock-other-hosts`). */
  unlockOtherHosts?: boolean;
  /** What a person decided (`--adopt`, `--drop`), for every shard: each shard's recovery takes those whose URN names its stack. */
  decisions?: PersonsDecisions;
  /** The command line that runs the fleet again, which the report's `--adopt` and `--drop` are appended to; default `npx dmarc-recover --stack <shard>`. */
  rerun?: string;
}

/** The decisions whose URN names the stack. */
function decisionsFor(stackName: string, decisions: PersonsDecisions): PersonsDecisions {
  const ours = (argument: string) => urnStack(argument)?.stack === stackName;
  return { adopt: (decisions.adopt ?? []).filter(ours), drop: (decisions.drop ?? []).filter(ours) };
}

/**
 * The recovery command (`dmarc-recover`) as the fleet's {@link StackRecovery}:
 * a shard it cannot settle (a live run holds it, or operations are left for a
 * person) fails with the command's own report ({@link ShardNotRecovered}). With `unlockOtherHosts`, a
 * lock taken on another host is taken for a dead run's, as a CI job run
 * again on a new runner needs when its workflow lets one run deploy at a time.
 */
export function shardRecovery(options: ShardRecoveryOptions = {}): StackRecovery {
  const { decisions, rerun, ...recover } = options;
  return async ({ stackName, workDir, env }) => {
    const own = decisions ? { decisions: decisionsFor(stackName, decisions) } : {};
    const report = await recoverStack({ stackName, workDir, env, ...recover, ...own });
    if (report.exitCode !== 0) {
      const again = { command: "npx dmarc-recover", stackName, ...(rerun ? { rerun } : {}) };
      throw new ShardNotRecovered(formatReport(report, again), report.exitCode === EXIT_CODES.unsettled);
    }
    return { summary: summaryOf(report) };
  };
}

export const recoverShard: StackRecovery = shardRecovery();
