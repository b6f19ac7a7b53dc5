import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { backendRecords } from "../checkpoint/backendRecords";
import { type Deployment, pendingOperations } from "../checkpoint/deployment";
import { fileBackendFolder, type StackFiles, stackFiles } from "../checkpoint/fileBackend";
import { type CheckpointRepair, findCheckpointRepair, repairCheckpoint } from "../checkpoint/repair";
import { isPostgresUrl } from "../client";
import { definitionOf } from "../registry";
import { clientFrom, type ProviderSettings, settingsFrom } from "../runtime/config";
import type { OwnershipFacts } from "./candidates";
import { readLocks, removeLock, type StackLock } from "./locks";
import { findRunProcesses, inFlightBoundMs, type StoppedOrphan, settleOrphans } from "./orphans";
import { applySettlement, type PersonsDecisions, type PlanInputs, planSettlement, type SettlementStep } from "./plan";
import { readPostgresLocks, removePostgresLocks } from "./postgresLocks";
import type { RunProcess } from "./processes";
import { openStack, type StackAccess } from "./stack";

/** Folder, relative to the project, where the state recovery started from is kept. */
export const DEFAULT_BACKUP_FOLDER = ".dmarc-recover";

export interface RecoverOptions {
  /** The stack, as `pulumi --stack` takes it. */
  stackName: string;
  /** The project folder (where Pulumi.yaml is); default: the current directory. */
  workDir?: string;
  /** Print the plan, change nothing. Default false. */
  dryRun?: boolean;
  /** Where the copy of the starting state goes; default `<workDir>/.dmarc-recover`. */
  backupDir?: string;
  /**
   * Remove locks taken on other hosts too, whose process this command cannot
   * check (a CI runner that is gone). Default false: such a lock is refused.
   */
  unlockOtherHosts?: boolean;
  /**
   * Only report the processes a killed run left behind (orphans), and refuse,
   * instead of stopping them. Default false: they are given the time their
   * calls may take (the provider's timeouts and retry budget), then stopped.
   */
  keepOrphans?: boolean;
  /** Extra environment for the `pulumi` CLI and the provider settings (DMARC_*). */
  env?: Record<string, string>;
  /**
   * What a person decided for pending creates recovery left unsettled, by
   * URN: adopt the object with this id (`--adopt <urn>=<id>`), or drop the
   * operation (`--drop <urn>`), as Pulumi's `--import-pending-creates` and
   * `--clear-pending-creates` do.
   */
  decisions?: PersonsDecisions;
}

/** 0 done or nothing to do; 3 refused, a run is alive (or --keep-orphans found a killed one's processes); 4 some operations are left for a person; 1 failure; 2 bad usage. */
export const EXIT_CODES = { ok: 0, failed: 1, usage: 2, refused: 3, unsettled: 4 } as const;

export type RecoveryOutcome = "healthy" | "planned" | "recovered" | "partial" | "refused";

export interface RecoveryReport {
  stackName: string;
  outcome: RecoveryOutcome;
  exitCode: number;
  /** Locks of live runs (or of hosts not checked), when refused. */
  liveLocks: StackLock[];
  /** Processes in the project folder whose engine still answers though no live `pulumi` is above them, when refused. */
  liveProcesses: RunProcess[];
  /** Processes of a killed run: stopped (with how), or only found (dry run, --keep-orphans). */
  orphans: (RunProcess | StoppedOrphan)[];
  /** The longest an orphan is given to finish its calls, in milliseconds, when there were orphans. */
  orphanBoundMs?: number;
  /** Locks left by dead runs: removed, or to be removed with a dry run. */
  deadLocks: StackLock[];
  /** A checkpoint the backend cannot load, and how it is (or would be) repaired. */
  checkpoint?: Omit<CheckpointRepair, "state">;
  steps: SettlementStep[];
  /** What pending creates were weighed against: the other stacks read, and when the killed run began. */
  weighed?: string;
  /** Whether `pulumi refresh` ran (or would run) for pending updates and deletes. */
  refresh: boolean;
  /** The copy of the starting state. */
  startingState?: string;
  /** What to run next. */
  next: string;
}

function timestamp(): string {
  return new Date().toISOString().replace(/[:.]/g, "-");
}

/** Keeps the state recovery starts from (and a cut-off checkpoint) next to the project. */
function keepStartingState(folder: string, stackName: string, state: Deployment, broken?: CheckpointRepair): string {
  mkdirSync(folder, { recursive: true });
  const base = join(folder, `${stackName.replace(/[/\\]/g, "_")}-${timestamp()}`);
  writeFileSync(`${base}.json`, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  if (broken?.broken === "content") copyFileSync(broken.file, `${base}.cut-off-checkpoint`);
  return `${base}.json`;
}

/**
 * The stack's config, secrets decrypted. While its checkpoint is broken the
 * CLI cannot read it, and a dry run does not repair it: the provider settings
 * then come from the DMARC_* environment alone.
 */
async function configFor(stack: StackAccess, checkpointBroken: boolean): Promise<Record<string, string>> {
  if (!checkpointBroken) return stack.config();
  try {
    return await stack.config();
  } catch {
    return {};
  }
}

/** The stack's provider settings as its provider reads them, its config read (secrets decrypted) once, when first asked. */
function settingsReader(
  stack: StackAccess,
  checkpointBroken: boolean,
  env: NodeJS.ProcessEnv,
): () => Promise<ProviderSettings> {
  let settings: Promise<ProviderSettings> | undefined;
  return () => {
    settings ??= configFor(stack, checkpointBroken).then((config) => settingsFrom((key) => config[key], env));
    return settings;
  };
}

/** The stack's checkpoint and lock files, where its backend is a folder. */
function backendFiles(stack: StackAccess): StackFiles | undefined {
  const folder = fileBackendFolder(stack.backendUrl);
  const shortName = stack.stackName.slice(stack.stackName.lastIndexOf("/") + 1);
  return folder === undefined ? undefined : stackFiles(folder, stack.projectName, shortName);
}

/** The stack's locks: files of a file backend, rows of a PostgreSQL one; none read for other backends. */
async function locksOf(stack: StackAccess, files: StackFiles | undefined): Promise<StackLock[]> {
  if (files) return readLocks(files.lockFolders);
  const shortName = stack.stackName.slice(stack.stackName.lastIndexOf("/") + 1);
  return isPostgresUrl(stack.backendUrl)
    ? readPostgresLocks(stack.backendUrl as string, stack.projectName, shortName)
    : [];
}

async function removeLocks(
  stack: StackAccess,
  files: StackFiles | undefined,
  locks: readonly StackLock[],
): Promise<void> {
  if (files) for (const lock of locks) removeLock(lock);
  else if (isPostgresUrl(stack.backendUrl)) await removePostgresLocks(stack.backendUrl as string, locks);
}

/** The locks and processes of runs: a live run's, which are refused, and those a dead or killed run left. */
async function runsFound(
  stack: StackAccess,
  files: StackFiles | undefined,
  workDir: string,
  unlockOtherHosts: boolean,
) {
  const locks = await locksOf(stack, files);
  const liveLocks = locks.filter((lock) => lock.holder === "alive" || (lock.holder === "unknown" && !unlockOtherHosts));
  const deadLocks = locks.filter((lock) => !liveLocks.includes(lock));
  const processes = await findRunProcesses(workDir);
  // A live pulumi's processes belong to a run that holds its own stack's lock, refused above when it is
  // this stack's: another stack's run in the same project is no reason to refuse.
  const liveProcesses = processes.live.filter((found) => !found.underLiveCli);
  return { liveLocks, deadLocks, liveProcesses, orphans: processes.orphans };
}

/** One recovery under way: what it was asked, the stack, and the report it fills in. */
interface Recovery {
  options: RecoverOptions;
  workDir: string;
  env: NodeJS.ProcessEnv;
  stack: StackAccess;
  files: StackFiles | undefined;
  report: RecoveryReport;
}

/** The state recovery starts from: the stack's, or the backup of a checkpoint cut short, restored unless dry run. */
async function startingPoint(recovery: Recovery) {
  const { options, report, files } = recovery;
  const broken = files ? findCheckpointRepair(files.checkpoints) : undefined;
  if (broken) {
    const { state: _state, ...repair } = broken;
    report.checkpoint = repair;
  }
  const state = broken ? broken.state : await recovery.stack.exportState();
  const backupFolder = resolve(recovery.workDir, options.backupDir ?? DEFAULT_BACKUP_FOLDER);
  const keepStart = () => keepStartingState(backupFolder, options.stackName, state, broken);
  if (broken && !options.dryRun) {
    // The CLI cannot even read the stack's config before the repair; the repair only undoes the kill's damage.
    report.startingState = keepStart();
    repairCheckpoint(broken);
  }
  return { state, broken, keepStart };
}

/** Removes the dead runs' locks, imports the settled state, refreshes what needs it, and says what is left. */
async function carryOut(recovery: Recovery, state: Deployment, services: PlanInputs): Promise<RecoveryReport> {
  const { report, stack } = recovery;
  await removeLocks(stack, recovery.files, report.deadLocks);
  if (report.steps.some((step) => step.action !== "refresh" && step.action !== "unsettled")) {
    await stack.importState(await applySettlement(state, report.steps, services));
  }
  if (report.refresh) await stack.refresh();
  const unsettled = report.steps.some((step) => step.action === "unsettled" || step.action === "duplicate");
  return unsettled
    ? {
        ...report,
        outcome: "partial",
        exitCode: EXIT_CODES.unsettled,
        next: "settle the operations left, then pulumi up",
      }
    : { ...report, outcome: "recovered" };
}

const NO_RECORDS = { recordedBy: new Map(), pendingCreates: [], unreadable: [], stacksRead: 0 };

/**
 * When the killed run began, from the locks dead runs left (the earliest: a
 * lower bound whichever run it was), and what every other stack of the
 * backend records.
 */
async function ownershipFacts({ stack, report }: Recovery): Promise<OwnershipFacts> {
  const elsewhere = await backendRecords(stack.backendUrl, stack, stack);
  const started = report.deadLocks
    .map((lock) => ({ lock, at: Date.parse(lock.timestamp) }))
    .filter(({ at }) => !Number.isNaN(at))
    .sort((a, b) => a.at - b.at)[0];
  return started
    ? {
        elsewhere,
        runStartedAt: started.at,
        runStartSource: `its lock, pid ${started.lock.pid} on ${started.lock.hostname}`,
      }
    : { elsewhere };
}

function weighedAgainst({ elsewhere, runStartedAt, runStartSource }: OwnershipFacts): string {
  const began =
    runStartedAt === undefined
      ? "when the killed run began is unknown (it left no lock)"
      : `the killed run began at ${new Date(runStartedAt).toISOString()} (${runStartSource})`;
  const unreadable = elsewhere.unreadable.length > 0 ? `, ${elsewhere.unreadable.length} could not be read` : "";
  return `pending creates weighed against ${elsewhere.stacksRead} other stack(s) of the backend${unreadable}; ${began}`;
}

/** With no live run in the way: stops the orphans, plans each pending operation's settlement, and carries it out. */
async function settle(recovery: Recovery): Promise<RecoveryReport> {
  const { options, report } = recovery;
  const { state, broken, keepStart } = await startingPoint(recovery);
  // The config (secrets decrypted) is read once, and only to wait for orphans or to ask the service.
  const settings = settingsReader(recovery.stack, broken !== undefined && options.dryRun === true, recovery.env);
  if (report.orphans.length > 0) {
    report.orphanBoundMs = inFlightBoundMs(await settings());
    // Before the service is read: an orphan may still be finishing a create. A dead engine cannot change the state.
    if (!options.dryRun) report.orphans = await settleOrphans(report.orphans, { boundMs: report.orphanBoundMs });
  }
  // The service, and the backend's other stacks, are asked only about pending creates.
  const creates = pendingOperations(state).some((operation) => operation.type === "creating");
  const facts = creates ? await ownershipFacts(recovery) : { elsewhere: NO_RECORDS };
  const services: PlanInputs = {
    client: creates ? clientFrom(await settings()) : undefined,
    definitionOf,
    facts,
    ...(options.decisions ? { decisions: options.decisions } : {}),
  };
  if (creates) report.weighed = weighedAgainst(facts);
  report.steps = await planSettlement(state, services);
  report.refresh = report.steps.some((step) => step.action === "refresh");
  const changesState = report.deadLocks.length > 0 || broken !== undefined || report.steps.length > 0;
  if (options.dryRun && (changesState || report.orphans.length > 0)) return { ...report, outcome: "planned" };
  if (!changesState) return report.orphans.length > 0 ? { ...report, outcome: "recovered" } : report;
  report.startingState ??= keepStart();
  return carryOut(recovery, state, services);
}

function refused(report: RecoveryReport, next: string): RecoveryReport {
  return { ...report, outcome: "refused", exitCode: EXIT_CODES.refused, next };
}

/**
 * Brings a stack an interrupted `pulumi up` left behind (lock, cut-off
 * checkpoint, pending operations, objects created for lost answers) back to a
 * state a plain `pulumi up` finishes without duplicating anything.
 */
export async function recoverStack(options: RecoverOptions): Promise<RecoveryReport> {
  const workDir = resolve(options.workDir ?? process.cwd());
  const env = { ...process.env, ...options.env };
  const stack = await openStack({ stackName: options.stackName, workDir, env: options.env });
  const files = backendFiles(stack);
  const { orphans, ...found } = await runsFound(stack, files, workDir, options.unlockOtherHosts === true);
  const report: RecoveryReport = {
    stackName: options.stackName,
    outcome: "healthy",
    exitCode: EXIT_CODES.ok,
    ...found,
    orphans: [],
    steps: [],
    refresh: false,
    next: `pulumi up --stack ${options.stackName}`,
  };
  if (report.liveLocks.length > 0 || report.liveProcesses.length > 0)
    return refused(report, "wait for that run to end");
  report.orphans = orphans;
  if (orphans.length > 0 && options.keepOrphans) {
    report.orphanBoundMs = inFlightBoundMs(await settingsReader(stack, true, env)());
    return refused(report, "stop those processes");
  }
  return settle({ options, workDir, env, stack, files, report });
}
