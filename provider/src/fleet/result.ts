// One shard's outcome, as the progress lines, the summary table and `--json` give it.

export type ShardStatus = "done" | "skipped" | "failed";

/**
 * Where one shard's wall time went, in seconds, measured by the runner. The
 * parts follow one another, so they add up to the shard's `seconds`.
 */
export interface ShardTiming {
  /** Settling an interrupted shard (its recovery, and a run the lock refused), 0 when none was needed. */
  recoverySeconds: number;
  /** The shard's workspace and stack: `pulumi stack select`, or `stack init` for a new shard. */
  stackSeconds: number;
  /**
   * Writing the fleet's configuration to the stack (`pulumi config set-all`),
   * 0 when it was already there; for an `up` of a shard whose `up` mark says
   * done, also marking it failed until this `up` succeeds.
   */
  configSeconds: number;
  /**
   * From the operation's start to the engine's first step on a provider's
   * resource (not the stack, a component or a provider itself): the CLI
   * starting, reading the stack's state from the backend, the inline program
   * starting, the provider process starting and configuring. The whole
   * operation when the engine never reached such a step.
   */
  startupSeconds: number;
  /** From that first step to the engine's summary: the resources' steps, calls to the service and checkpoints. */
  stepsSeconds: number;
  /**
   * From the engine's summary until the operation returned: the last
   * checkpoint, the engine exiting, and the Automation API's reads after it
   * (outputs and history, after `up`); then setting or clearing the shard's
   * drift mark, and writing its `up` mark (done, or failed).
   */
  finishSeconds: number;
  /** Removing the stack of an emptied or destroyed shard, 0 when it stays. */
  removeSeconds: number;
}

/** The outcome of one shard's run, as the summary and `--json` give it. */
export interface ShardResult {
  shard: string;
  operation: string;
  status: ShardStatus;
  tenants: number;
  /** Resource operations by kind (create, update, delete, same...). */
  changes: Record<string, number>;
  seconds: number;
  /** Engine output of the run. */
  log?: string;
  /** First error line, for a failed shard. */
  error?: string;
  /**
   * For a shard failed because its recovery left operations for a person:
   * the recovery's report, each pending create with the objects found and
   * the fleet command with `--adopt` or `--drop` that settles it.
   */
  unsettled?: string[];
  /** What the recovery did before the run, for an interrupted shard. */
  recovered?: string;
  /** Why a shard was not run. */
  reason?: string;
  /** Its stack was removed (emptied, or destroyed). */
  removed?: boolean;
  /** Where its time went; absent for a skipped shard. */
  timing?: ShardTiming;
}

/** What every result of a shard carries, whatever its status. */
export interface ShardRun {
  shard: string;
  operation: string;
  tenants: number;
  log?: string;
}

export type ShardOutcome =
  | { status: "done"; changes: Record<string, number>; removed?: boolean }
  | { status: "failed"; error: string; unsettled?: string[] }
  | { status: "skipped"; reason: string };

/** The one place a {@link ShardResult} is made. */
export function shardResult(
  run: ShardRun,
  outcome: ShardOutcome,
  spent: { seconds: number; timing?: ShardTiming; recovered?: string | undefined } = { seconds: 0 },
): ShardResult {
  return {
    ...run,
    status: outcome.status,
    changes: outcome.status === "done" ? outcome.changes : {},
    seconds: spent.seconds,
    ...(outcome.status === "failed" ? { error: outcome.error } : {}),
    ...(outcome.status === "failed" && outcome.unsettled ? { unsettled: outcome.unsettled } : {}),
    ...(outcome.status === "skipped" ? { reason: outcome.reason } : {}),
    ...(outcome.status === "done" && outcome.removed ? { removed: true } : {}),
    ...(spent.recovered ? { recovered: spent.recovered } : {}),
    ...(spent.timing ? { timing: spent.timing } : {}),
  };
}
