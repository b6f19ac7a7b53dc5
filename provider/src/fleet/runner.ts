import { createWriteStream, mkdirSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import type { Writable } from "node:stream";
import { type EngineEvent, LocalWorkspace, type OpMap, PulumiCommand, type Stack } from "@pulumi/pulumi/automation";
import type { Plan } from "../api";
import { createClient } from "../client";
import { checkPlans } from "../inventory/declare";
import { CONFIG_NAMESPACE, clientOptionsFrom, type ProviderSettings, readSettings } from "../runtime/config";
import { assignShards, DEFAULT_SHARD_SIZE, type Shard, shardNumber } from "./assignment";
import { RequestBudget } from "./budget";
import { type ProgressSink, progressSink, type ShardResult, type ShardTiming } from "./progress";
import { type Interruption, lockOf, recoveryHint, type StackRecovery } from "./recovery";
import {
  applyConfig,
  type FleetProject,
  type ShardState,
  shardDigest,
  shardProgram,
  shardStack,
  shardStateOf,
  workspaceOptions,
} from "./shard";

export type FleetCommand = "preview" | "up" | "refresh" | "destroy" | "status" | "shards";
export const FLEET_COMMANDS: readonly FleetCommand[] = ["preview", "up", "refresh", "destroy", "status", "shards"];

export interface FleetOptions extends FleetProject {
  /** Stem of the shard stacks' names: `<fleet>-001`, `<fleet>-002`... */
  fleet: string;
  /** Tenants per new shard; default {@link DEFAULT_SHARD_SIZE}. Existing shards keep their tenants. */
  shardSize?: number;
  /** Shards run at once; default the machine's cores. */
  concurrency?: number;
  /** Run only these shards (stack names), e.g. one CI job's; the others are still read to place new tenants. */
  only?: readonly string[];
  /** `up` runs every shard, not only those whose tenants changed or that failed. */
  all?: boolean;
  /** Settles an interrupted shard before it runs again; without it such a shard fails with the command to run. */
  recover?: StackRecovery;
  /** Where progress goes; default stderr. */
  progress?: Writable & { isTTY?: boolean };
}

/** One shard as `shards` and `status` report it. */
export interface ShardOverview {
  name: string;
  exists: boolean;
  tenants: string[];
  leaving: string[];
  /** Its last `up` deployed exactly these tenants with this package version. */
  upToDate: boolean;
  interrupted?: string;
}

/** The runner's own work before any shard runs, in seconds. */
export interface FleetTiming {
  /** Finding the CLI (`pulumi version`), listing the fleet's shard stacks in the backend, exporting each one's state. */
  scanSeconds: number;
  /** Reading and checking the partner's catalogue (preview and up), 0 otherwise. */
  catalogueSeconds: number;
}

export interface FleetReport {
  command: FleetCommand;
  fleet: string;
  shardSize: number;
  shards: ShardOverview[];
  /** One per shard the command ran (or skipped), for the operations. */
  results: ShardResult[];
  ok: boolean;
  timing: FleetTiming;
}

/** A settled pool: at most `limit` calls of `run` in flight, every item's result in order. */
async function inPool<T, R>(
  items: readonly T[],
  limit: number,
  run: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await run(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}

function stackNameOf(listed: string): string {
  return listed.slice(listed.lastIndexOf("/") + 1);
}

/** Every shard stack of the fleet in the backend, with what its state holds. */
async function scanFleet(
  options: FleetOptions,
  pulumi: PulumiCommand,
  concurrency: number,
): Promise<Map<number, ShardState>> {
  const workspace = await LocalWorkspace.create(workspaceOptions(options, `${options.fleet}.scan`, pulumi));
  const numbered = (await workspace.listStacks())
    .map((summary) => stackNameOf(summary.name))
    .map((name) => ({ name, number: shardNumber(options.fleet, name) }))
    .filter((entry): entry is { name: string; number: number } => entry.number !== undefined);
  const states = await inPool(numbered, concurrency, async ({ name }) =>
    shardStateOf(name, await workspace.exportStack(name)),
  );
  return new Map(numbered.map((entry, index) => [entry.number, states[index] as ShardState]));
}

function describeInterruption(interruption: Interruption): string {
  return interruption.kind === "locked"
    ? `locked: ${interruption.message}`
    : `${interruption.operations.length} pending operation(s)`;
}

function overviewOf(options: FleetOptions, shard: Shard, state: ShardState | undefined): ShardOverview {
  return {
    name: shard.name,
    exists: shard.exists,
    tenants: shard.tenants,
    leaving: shard.leaving,
    upToDate:
      state?.digest === shardDigest(options.inventory, shard.tenants) &&
      shard.leaving.length === 0 &&
      state.interruption === undefined,
    ...(state?.interruption ? { interrupted: describeInterruption(state.interruption) } : {}),
  };
}

/** The first line that says what went wrong, from the engine's output or the error. */
export function firstErrorLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const lines = text.split("\n").map((line) => line.trim());
  const marked = lines.find((line) => /^error:/i.test(line) && !/^error: update failed$/i.test(line));
  const detail = lines.find((line) => /error/i.test(line) && !/^(code|stdout|stderr|err\?):/i.test(line));
  return (marked ?? detail ?? lines.find((line) => line !== "") ?? "unknown error").slice(0, 300);
}

function counts(changes: OpMap | Record<string, number> | undefined): Record<string, number> {
  const result: Record<string, number> = {};
  for (const [kind, count] of Object.entries(changes ?? {})) if (count) result[kind] = count;
  return result;
}

/** The provider settings every shard gets: the `dmarc:*` config, else the environment. */
function settingsOf(options: FleetOptions): ProviderSettings {
  return readSettings({ get: (key) => options.config[`${CONFIG_NAMESPACE}:${key}`]?.value }, process.env);
}

/** The fleet's rate for all shards together: `dmarc:requestsPerSecond`. */
function totalRate(options: FleetOptions): number | undefined {
  const settings = settingsOf(options);
  const rate = settings.requestsPerSecond === undefined ? undefined : Number(settings.requestsPerSecond);
  return rate !== undefined && Number.isFinite(rate) && rate > 0 ? rate : undefined;
}

/**
 * The partner's catalogue, read once for every shard, and checked: an
 * inventory naming plans it cannot price is refused before any shard runs.
 * Handed to the shards' programs, so they send no request outside their
 * share of the fleet's request budget.
 */
async function checkedCatalogue(options: FleetOptions): Promise<Plan[] | undefined> {
  if (options.inventory.tenants.length === 0) return undefined;
  const plans = await createClient(clientOptionsFrom(settingsOf(options))).listPlans();
  checkPlans(options.inventory, plans);
  return plans;
}

interface RunContext {
  options: FleetOptions;
  /** The one CLI every workspace of the run uses, so none of them runs `pulumi version` again. */
  pulumi: PulumiCommand;
  budget: RequestBudget;
  progress: ProgressSink;
  logDir: string;
  /** The catalogue the shards' programs price their tenants from (preview and up). */
  plans: Plan[] | undefined;
  /** Shards that will start right after this one, for the budget split. */
  startingWith: () => number;
}

async function recoverFirst(context: RunContext, stackName: string, interruption: Interruption): Promise<string> {
  const { options } = context;
  if (!options.recover) throw new Error(recoveryHint(stackName, interruption));
  context.progress.note(stackName, `interrupted (${describeInterruption(interruption)}); recovering`);
  const outcome = await options.recover({
    stackName,
    workDir: workspaceOptions(options, stackName).workDir as string,
    env: options.env,
    reason: interruption,
  });
  return outcome.summary;
}

/** Consecutive parts of one shard's run, timed one after the other. */
class ShardClock {
  readonly timing: ShardTiming = {
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

/**
 * What the engine's events said of one operation: when it reached its first
 * step on a provider's resource and its summary, on `performance.now()`'s
 * clock, and the summary's change counts.
 */
interface OperationMarks {
  firstStepAt?: number;
  summaryAt?: number;
  changes?: OpMap;
}

function marking(marks: OperationMarks): (event: EngineEvent) => void {
  return (event) => {
    const step = event.resourcePreEvent?.metadata;
    const custom = (step?.new ?? step?.old)?.custom === true && !step?.type.startsWith("pulumi:providers:");
    if (custom && marks.firstStepAt === undefined) marks.firstStepAt = performance.now();
    if (event.summaryEvent) {
      marks.summaryAt = performance.now();
      marks.changes = event.summaryEvent.resourceChanges;
    }
  };
}

async function operate(
  stack: Stack,
  command: Exclude<FleetCommand, "status" | "shards">,
  onOutput: (text: string) => void,
  marks: OperationMarks,
): Promise<Record<string, number>> {
  const common = { onOutput, onEvent: marking(marks), color: "never" as const };
  switch (command) {
    case "preview":
      return counts((await stack.preview(common)).changeSummary);
    case "up":
      await stack.up(common);
      break;
    case "refresh":
      await stack.refresh(common);
      break;
    case "destroy":
      await stack.destroy(common);
      break;
  }
  // The engine's summary; the stack's history only should that event have gone missing.
  return counts(marks.changes ?? (await stack.history(1))[0]?.resourceChanges);
}

/**
 * The Automation API reads the stack again after an operation: its outputs
 * (twice) and its last history entry after `up`, that entry after `refresh`
 * and `destroy`. Each read is one more `pulumi` process (~0.3 s of CPU) and
 * the fleet uses none of them, as the change counts come from the engine's
 * summary event; so a shard's stack skips them.
 */
function withoutReadsAfterOperations(stack: Stack): Stack {
  stack.outputs = async () => ({});
  stack.info = async () => undefined;
  return stack;
}

async function runShard(
  context: RunContext,
  command: Exclude<FleetCommand, "status" | "shards">,
  shard: Shard,
  state: ShardState | undefined,
): Promise<ShardResult> {
  const { options, budget, progress } = context;
  const startedAt = Date.now();
  const log = join(context.logDir, `${shard.name}.${command}.log`);
  const base = { shard: shard.name, operation: command, tenants: shard.tenants.length, log };
  const share = budget.take(context.startingWith());
  progress.started(shard.name, command);
  const output = createWriteStream(log);
  const clock = new ShardClock();
  let marks: OperationMarks | undefined;
  let recovered: string | undefined;
  try {
    if (state?.interruption) recovered = await recoverFirst(context, shard.name, state.interruption);
    clock.lap("recoverySeconds");
    const digest = shardDigest(options.inventory, shard.tenants);
    const program = shardProgram(options, shard.tenants, digest, context.plans);
    const stack = withoutReadsAfterOperations(
      await shardStack(options, shard.name, program, shard.exists, context.pulumi),
    );
    clock.lap("stackSeconds");
    await applyConfig(stack, {
      ...options.config,
      ...(share === undefined ? {} : { [`${CONFIG_NAMESPACE}:requestsPerSecond`]: { value: share.toFixed(3) } }),
    });
    clock.lap("configSeconds");
    const write = (text: string) => output.write(text);
    let changes: Record<string, number>;
    try {
      marks = {};
      changes = await operate(stack, command, write, marks);
    } catch (error) {
      const lock = lockOf(error);
      if (!lock) throw error;
      marks = undefined;
      recovered = await recoverFirst(context, shard.name, lock);
      clock.lap("recoverySeconds");
      marks = {};
      changes = await operate(stack, command, write, marks);
    }
    clock.lapOperation(marks);
    marks = undefined;
    const emptied = command === "destroy" || (command === "up" && shard.tenants.length === 0);
    if (emptied) await stack.workspace.removeStack(shard.name);
    clock.lap("removeSeconds");
    const result: ShardResult = {
      ...base,
      status: "done",
      changes,
      seconds: (Date.now() - startedAt) / 1000,
      ...(recovered ? { recovered } : {}),
      ...(emptied ? { removed: true } : {}),
      timing: clock.rounded(),
    };
    progress.finished(result);
    return result;
  } catch (error) {
    output.write(`\n${error instanceof Error ? error.message : String(error)}\n`);
    if (marks) clock.lapOperation(marks);
    const result: ShardResult = {
      ...base,
      status: "failed",
      changes: {},
      seconds: (Date.now() - startedAt) / 1000,
      error: firstErrorLine(error),
      ...(recovered ? { recovered } : {}),
      timing: clock.rounded(),
    };
    progress.finished(result);
    return result;
  } finally {
    budget.release(share);
    await new Promise<void>((resolve) => output.end(resolve));
  }
}

/** Which shards an operation works on, and why the others are left alone. */
function selectShards(
  options: FleetOptions,
  command: FleetCommand,
  shards: readonly Shard[],
  overviews: ReadonlyMap<string, ShardOverview>,
): { run: Shard[]; skipped: ShardResult[] } {
  const chosen = shards.filter((shard) => !options.only || options.only.includes(shard.name));
  const run: Shard[] = [];
  const skipped: ShardResult[] = [];
  for (const shard of chosen) {
    const skip = (reason: string) =>
      skipped.push({
        shard: shard.name,
        operation: command,
        status: "skipped",
        tenants: shard.tenants.length,
        changes: {},
        seconds: 0,
        reason,
      });
    if ((command === "refresh" || command === "destroy") && !shard.exists) skip("no stack yet");
    else if (command === "up" && !options.all && overviews.get(shard.name)?.upToDate)
      skip("unchanged since its last up");
    else run.push(shard);
  }
  return { run, skipped };
}

/**
 * Runs one command over the fleet: every shard stack of `options.fleet` in
 * the backend, plus the new shards the inventory's new tenants need. Shards
 * run side by side (`concurrency`), share one request budget, and a failed
 * shard does not stop the others: the report lists every shard's result.
 */
export async function runFleet(command: FleetCommand, options: FleetOptions): Promise<FleetReport> {
  const concurrency = Math.max(1, options.concurrency ?? availableParallelism());
  const shardSize = options.shardSize ?? DEFAULT_SHARD_SIZE;
  const timing: FleetTiming = { scanSeconds: 0, catalogueSeconds: 0 };
  const scanStart = performance.now();
  // As each workspace would: the CLI's version checked unless the environment given says not to.
  const pulumi = await PulumiCommand.get({
    skipVersionCheck: Boolean(options.env.PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK),
  });
  const states = await scanFleet(options, pulumi, concurrency);
  timing.scanSeconds = (performance.now() - scanStart) / 1000;
  const deployed = new Map([...states].map(([number, state]) => [number, state.tenants]));
  const keys = options.inventory.tenants.map((tenant) => tenant.key);
  const shards = assignShards(options.fleet, deployed, keys, shardSize);
  const stateOf = (shard: Shard) => states.get(shard.number);
  const overviews = new Map(shards.map((shard) => [shard.name, overviewOf(options, shard, stateOf(shard))]));
  const report = (results: ShardResult[]): FleetReport => ({
    command,
    fleet: options.fleet,
    shardSize,
    shards: [...overviews.values()].filter((overview) => !options.only || options.only.includes(overview.name)),
    results,
    ok: results.every((result) => result.status !== "failed"),
    timing,
  });
  if (command === "shards" || command === "status") return report([]);
  const catalogueStart = performance.now();
  const plans = command === "preview" || command === "up" ? await checkedCatalogue(options) : undefined;
  timing.catalogueSeconds = (performance.now() - catalogueStart) / 1000;

  const { run, skipped } = selectShards(options, command, shards, overviews);
  const logDir = join(options.stateDir, "logs");
  mkdirSync(logDir, { recursive: true });
  const progress = progressSink(options.progress ?? process.stderr, run.length + skipped.length);
  for (const result of skipped) progress.finished(result);
  let waiting = run.length;
  let inFlight = 0;
  const context: RunContext = {
    options,
    pulumi,
    budget: new RequestBudget(totalRate(options)),
    progress,
    logDir,
    plans,
    // The shards that start together, this one included: the free slots, or fewer when fewer wait.
    startingWith: () => Math.max(1, Math.min(concurrency - inFlight, waiting + 1)),
  };
  const results = await inPool(run, concurrency, async (shard) => {
    waiting--;
    const result = runShard(context, command, shard, stateOf(shard));
    inFlight++;
    try {
      return await result;
    } finally {
      inFlight--;
    }
  });
  progress.close();
  return report([...skipped, ...results]);
}
