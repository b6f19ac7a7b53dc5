import { createWriteStream, existsSync, type WriteStream } from "node:fs";
import { join } from "node:path";
import {
  type ConfigMap,
  type EngineEvent,
  LocalWorkspace,
  type OpMap,
  type PulumiCommand,
  type Stack,
} from "@pulumi/pulumi/automation";
import type { Plan } from "../../api";
import { type Interruption, interruptionSummary, lockOf, recoveryHint } from "../../checkpoint/interruption";
import { formatRate, NOTICE_PREFIX } from "../../client";
import { ShardNotRecovered, type StackRecovery } from "../../recovery/shard";
import { CONFIG_NAMESPACE } from "../../runtime/config";
import type { ShardOperation } from "../fleetOptions";
import type { Shard } from "../plan/assignment";
import type { ProgressSink } from "../progress";
import { type ShardOutcome, type ShardResult, shardResult } from "../result";
import { previewRefreshOf } from "./automation";
import { marking, type OperationMarks, ShardClock } from "./clock";
import { driftMarkValue, writeDriftMark } from "./driftMark";
import {
  applyConfig,
  type ShardBackend,
  type ShardState,
  type ShardTenants,
  shardDigest,
  shardProgram,
  shardStack,
  workspaceOptions,
} from "./shard";
import type { StepLog } from "./stepLog";
import { upDoneValue, upFailedValue, writeUpMark } from "./upMark";

/** What every shard job of one fleet run shares. */
export interface ShardJobContext {
  /** Where the shard stacks are, with the environment that takes the shards' turns from the run's pacer. */
  backend: ShardBackend;
  tenants: ShardTenants;
  /** Stack configuration applied to every shard. */
  config: ConfigMap;
  /** Settles an interrupted shard before it runs again; without it such a shard fails with the command to run. */
  recover?: StackRecovery;
  /** `drift --audit-log`: a drift that finds none still writes its check's time, which the next run reads the log from. */
  auditLog: boolean;
  /** The one CLI every workspace of the run uses, so none of them runs `pulumi version` again. */
  pulumi: PulumiCommand;
  /** A shard's own rate should its provider lose the fleet's pacer; undefined when the fleet is unpaced. */
  fallbackRate: number | undefined;
  progress: ProgressSink;
  logDir: string;
  /** The catalogue the shards' programs price their tenants from (preview and up). */
  plans: Plan[] | undefined;
  /** Where every shard's engine steps go, for the findings per tenant. */
  steps: StepLog;
}

export interface ShardJob {
  operation: ShardOperation;
  shard: Shard;
  /** What the scan found of the shard in the backend; undefined for a new shard. */
  state: ShardState | undefined;
  /** URNs the operation leaves alone: the tenants whose offboarding was refused. */
  exclude?: readonly string[];
  /** `up` and `preview` refresh the shard first: it carries a drift mark, or `--refresh` was given. */
  refresh?: boolean;
}

/** One shard's run while it goes on: its clock, its engine log, and what its recovery said. */
interface Running {
  context: ShardJobContext;
  job: ShardJob;
  startedAt: Date;
  clock: ShardClock;
  log: WriteStream;
  /** The marks of the operation under way, so a failure still splits its time. */
  marks?: OperationMarks;
  recovered?: string;
  /** The shard's stack, once opened: a failed `up` is marked on it. */
  stack?: Stack;
  /** The digest the shard's `up` deploys. */
  digest: string;
  /** This run's start marked the shard failed (its `up` mark said done). */
  markedFailed?: boolean;
}

/** The first line that says what went wrong, from the engine's output or the error, whole: its end says what to do. */
export function firstErrorLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const lines = text.split("\n").map((line) => line.trim());
  const marked = lines.find((line) => /^error:/i.test(line) && !/^error: update failed$/i.test(line));
  const detail = lines.find((line) => /error/i.test(line) && !/^(code|stdout|stderr|err\?):/i.test(line));
  return marked ?? detail ?? lines.find((line) => line !== "") ?? "unknown error";
}

function counts(changes: OpMap | Record<string, number> | undefined): Record<string, number> {
  const result: Record<string, number> = {};
  for (const [kind, count] of Object.entries(changes ?? {})) if (count) result[kind] = count;
  return result;
}

/**
 * The Automation API reads the stack again after an operation (its outputs
 * twice and its last history entry after `up`, that entry after `refresh`
 * and `destroy`), one `pulumi` process each. The fleet uses none of them, as
 * the change counts come from the engine's summary event; so a shard's stack
 * skips them.
 */
function withoutReadsAfterOperations(stack: Stack): Stack {
  stack.outputs = async () => ({});
  stack.info = async () => undefined;
  return stack;
}

/** The fleet's configuration with the shard's own rate (see {@link writeConfig}). */
function shardConfig(config: ConfigMap, rate: number | undefined): ConfigMap {
  const perMinute = rate === undefined ? "0" : String(rate);
  return { ...config, [`${CONFIG_NAMESPACE}:requestsPerMinute`]: { value: perMinute } };
}

/** Hands an interrupted shard to the recovery, or fails with the command to run when the runner has none. */
async function recover(running: Running, interruption: Interruption): Promise<void> {
  const { backend, config, recover, progress } = running.context;
  const stackName = running.job.shard.name;
  if (!recover) throw new Error(recoveryHint(stackName, interruption));
  progress.note(stackName, `interrupted (${interruptionSummary(interruption)}); recovering`);
  // The run that was killed may have been on another machine (a CI job run again): the work folder is
  // made here, with the project settings the recovery's `pulumi` calls need and the stack's settings
  // file, whose provider settings it asks the service with.
  const workspace = await LocalWorkspace.create(workspaceOptions(backend, stackName, running.context.pulumi));
  if (!existsSync(join(workspace.workDir, `Pulumi.${stackName}.yaml`))) {
    await workspace.setAllConfig(stackName, shardConfig(config, running.context.fallbackRate));
  }
  const outcome = await recover({
    stackName,
    workDir: workspace.workDir,
    env: backend.env,
    reason: interruption,
  });
  running.recovered = outcome.summary;
  running.clock.lap("recoverySeconds");
}

/** The shard's stack, selected or created, running the shard's program. */
async function openStack(running: Running): Promise<Stack> {
  const { backend, tenants, pulumi, plans } = running.context;
  const { shard } = running.job;
  const program = shardProgram(tenants, shard.tenants, plans);
  const stack = await shardStack(backend, shard.name, program, shard.exists, pulumi);
  running.clock.lap("stackSeconds");
  running.stack = withoutReadsAfterOperations(stack);
  return running.stack;
}

/**
 * The fleet's configuration, with the rate the shard's provider keeps to
 * should it lose the fleet's pacer (whose address its environment holds,
 * never its configuration): written as `requestsPerMinute`, which wins over
 * a `requestsPerSecond` from the configuration or an earlier run; 0 when the
 * fleet is unpaced, so a shard never falls back to the default on its own.
 */
async function writeConfig(running: Running, stack: Stack, rate: number | undefined): Promise<void> {
  await applyConfig(stack, shardConfig(running.context.config, rate));
  running.clock.lap("configSeconds");
}

/** A shard's waits shown in the fleet's progress at most this often; its log keeps every line. */
const NOTICE_RELAY_INTERVAL_MS = 15_000;

/**
 * Shows in the fleet's progress why a shard waits: its provider's lines on
 * the rate limit and its pacing (the client's notices, on standard error,
 * which the engine passes on as diagnostics).
 */
function noticeRelay(running: Running): (event: EngineEvent) => void {
  let relayedAt = Number.NEGATIVE_INFINITY;
  return (event) => {
    const message = event.diagnosticEvent?.message.trim();
    if (!message?.startsWith(NOTICE_PREFIX)) return;
    const now = performance.now();
    if (now - relayedAt < NOTICE_RELAY_INTERVAL_MS) return;
    relayedAt = now;
    running.context.progress.note(running.job.shard.name, message.slice(NOTICE_PREFIX.length));
  };
}

/** One engine operation on the stack; its change counts from the engine's summary. */
async function operate(running: Running, stack: Stack): Promise<Record<string, number>> {
  const marks: OperationMarks = {};
  running.marks = marks;
  const mark = marking(marks);
  const record = running.context.steps.recorder(running.job.shard.name);
  const relay = noticeRelay(running);
  const common = {
    onOutput: (text: string) => running.log.write(text),
    onEvent: (event: EngineEvent) => {
      mark(event);
      record(event);
      relay(event);
    },
    color: "never" as const,
  };
  const { exclude, refresh } = running.job;
  const planning = {
    ...common,
    ...(refresh ? { refresh: true } : {}),
    ...(exclude && exclude.length > 0 ? { exclude: [...exclude] } : {}),
  };
  let changes: OpMap | Record<string, number> | undefined;
  switch (running.job.operation) {
    case "preview":
      changes = (await stack.preview(planning)).changeSummary;
      break;
    case "up":
      await stack.up(planning);
      break;
    case "refresh":
      await stack.refresh(common);
      break;
    case "drift":
      changes = (await previewRefreshOf(stack)(common)).changeSummary;
      break;
    case "destroy":
      await stack.destroy(exclude && exclude.length > 0 ? { ...common, exclude: [...exclude] } : common);
      break;
  }
  // The engine's summary; the stack's history only should that event have gone missing.
  changes ??= marks.changes ?? (await stack.history(1))[0]?.resourceChanges;
  running.clock.lapOperation(marks);
  running.marks = undefined;
  return counts(changes);
}

/** The operation, once more after the recovery when a lock the scan could not see refuses it. */
async function operateSettlingLocks(running: Running, stack: Stack): Promise<Record<string, number>> {
  try {
    return await operate(running, stack);
  } catch (error) {
    const lock = lockOf(error);
    if (!lock) throw error;
    running.marks = undefined;
    await recover(running, lock);
    return operate(running, stack);
  }
}

/**
 * What an operation writes into the shard's drift mark, given whether it
 * found drift, whether the shard was marked, and whether the run keeps the
 * time of each clean check (`drift --audit-log` reads the audit log from it).
 */
type Marking = (found: boolean, marked: boolean, keepCheckTime: boolean) => "found" | "none" | undefined;

const DRIFT_MARKING: Partial<Record<ShardOperation, Marking>> = {
  drift: (found, marked, keepCheckTime) => (found ? "found" : marked || keepCheckTime ? "none" : undefined),
  refresh: (found) => (found ? "found" : undefined),
  up: (_found, marked) => (marked ? "none" : undefined),
};

/** Marks the shard where `drift` or `refresh` found drift; unmarks it once an `up` healed it or a `drift` saw none. */
async function markDrift(running: Running, stack: Stack): Promise<void> {
  const { operation, state, shard } = running.job;
  const outcome = DRIFT_MARKING[operation]?.(
    running.context.steps.driftFound(shard.name),
    state?.driftMark !== undefined,
    running.context.auditLog,
  );
  // The operation's start: a change made while it ran is after the mark, so it is never missed.
  if (outcome) await writeDriftMark(stack, driftMarkValue(outcome, operation, running.startedAt));
  running.clock.lap("finishSeconds");
}

/** Removes the stack of a destroyed shard, or of one whose `up` emptied it; answers whether it did. */
async function removeEmptied(running: Running, stack: Stack): Promise<boolean> {
  if (!emptiedBy(running.job)) return false;
  await stack.workspace.removeStack(running.job.shard.name);
  running.clock.lap("removeSeconds");
  return true;
}

/** A destroy that left refused tenants out keeps its stack, which still holds them. */
function emptiedBy({ operation, shard, exclude }: ShardJob): boolean {
  if (exclude && exclude.length > 0) return false;
  return operation === "destroy" || (operation === "up" && shard.tenants.length === 0);
}

/** An `up` whose shard keeps its stack: its `up` mark is written. */
const marksUp = (job: ShardJob) => job.operation === "up" && !emptiedBy(job);

/**
 * Before an `up` changes anything: a shard marked done is marked failed, so a
 * runner killed from here on leaves it due, even should the inventory go
 * back to what that mark names. A shard with no mark, or marked failed
 * already, is due as it is, and costs no write.
 */
async function markUpStarted(running: Running, stack: Stack): Promise<void> {
  if (!marksUp(running.job) || running.job.state?.lastUp?.outcome !== "done") return;
  await writeUpMark(stack, upFailedValue(running.startedAt));
  running.markedFailed = true;
  running.clock.lap("configSeconds");
}

/** After an `up` returned, that is once every object of every tenant succeeded: the digest it deployed. */
async function markUpDone(running: Running, stack: Stack): Promise<void> {
  if (!marksUp(running.job)) return;
  await writeUpMark(stack, upDoneValue(running.digest, running.startedAt));
  running.clock.lap("finishSeconds");
}

/**
 * After a failed `up`: its shard marked failed at this run's start, unless
 * that start marked it already or its stack was never opened (a shard with
 * no stack is due as it is). A failure to write is only logged: the shard's
 * result is its first failure.
 */
async function markUpFailed(running: Running): Promise<void> {
  const { stack, job } = running;
  if (!stack || !marksUp(job) || running.markedFailed) return;
  try {
    await writeUpMark(stack, upFailedValue(running.startedAt));
  } catch (error) {
    running.log.write(`\ncould not mark the failed up on the stack: ${firstErrorLine(error)}\n`);
  }
  running.clock.lap("finishSeconds");
}

/** A failed shard's outcome: its first error line, and the recovery's report when a person must settle what it left. */
function failureOf(error: unknown): ShardOutcome {
  if (error instanceof ShardNotRecovered && error.needsPerson) {
    return {
      status: "failed",
      error: "its recovery left operations that a person settles: rerun with --adopt or --drop as its report says",
      unsettled: [...error.report],
    };
  }
  return { status: "failed", error: firstErrorLine(error) };
}

/** Every step of one shard's run, in order. */
async function steps(running: Running, rate: number | undefined): Promise<ShardOutcome> {
  const { interruption } = running.job.state ?? {};
  if (interruption) await recover(running, interruption);
  const stack = await openStack(running);
  await writeConfig(running, stack, rate);
  await markUpStarted(running, stack);
  const changes = await operateSettlingLocks(running, stack);
  await markDrift(running, stack);
  await markUpDone(running, stack);
  const removed = await removeEmptied(running, stack);
  return { status: "done", changes, ...(removed ? { removed } : {}) };
}

/**
 * Runs one shard: settles an interruption the scan found, opens its stack,
 * writes the configuration with the shard's fallback rate,
 * runs the operation, sets or clears its drift mark, writes its `up` mark
 * (for `up`), and removes an emptied stack. Never throws: a failure is the shard's result, with its first error
 * line and its log.
 */
export async function runShardJob(context: ShardJobContext, job: ShardJob): Promise<ShardResult> {
  const { shard, operation } = job;
  const startedAt = performance.now();
  const logFile = join(context.logDir, `${shard.name}.${operation}.log`);
  const running: Running = {
    context,
    job,
    startedAt: new Date(),
    clock: new ShardClock(),
    log: createWriteStream(logFile),
    digest: shardDigest(context.tenants.inventory, shard.tenants),
  };
  const rate = context.fallbackRate;
  context.progress.started(shard.name, operation);
  if (rate !== undefined) {
    context.progress.note(
      shard.name,
      `paced at ${formatRate(rate)} requests a minute on its own, should it lose the fleet's pacer`,
    );
  }
  let outcome: ShardOutcome;
  try {
    outcome = await steps(running, rate);
  } catch (error) {
    running.log.write(`\n${error instanceof Error ? error.message : String(error)}\n`);
    if (running.marks) running.clock.lapOperation(running.marks);
    outcome = failureOf(error);
    await markUpFailed(running);
  } finally {
    await new Promise<void>((resolve) => running.log.end(resolve));
  }
  const result = shardResult({ shard: shard.name, operation, tenants: shard.tenants.length, log: logFile }, outcome, {
    seconds: (performance.now() - startedAt) / 1000,
    timing: running.clock.rounded(),
    recovered: running.recovered,
  });
  context.progress.finished(result);
  return result;
}
