import { resourceName } from "../checkpoint/deployment";
import { shellWord, shownPath } from "../cli/shown";
import { describeJudged } from "./candidates";
import { describeLock } from "./locks";
import type { StoppedBy, StoppedOrphan } from "./orphans";
import type { SettlementAction, SettlementStep } from "./plan";
import type { RunProcess } from "./processes";
import type { RecoveryReport } from "./recover";

// The command's output: one line per thing settled, then what to run next.

/**
 * How each settlement is said: `done` and `planned` start the command's
 * line for a step (`after` ends it), `tally` counts steps in the one-line
 * summary the fleet reports ("adopted 2, dropped 1").
 */
export const SETTLEMENT_WORDS: Record<
  SettlementAction,
  { done: string; planned: string; after?: string; tally: string }
> = {
  adopt: { done: "adopted", planned: "would adopt", tally: "adopted" },
  recreate: {
    done: "recreated",
    planned: "would recreate",
    after: "deleted; the next pulumi up creates it with a new secret",
    tally: "recreated",
  },
  drop: { done: "dropped", planned: "would drop", tally: "dropped" },
  refresh: { done: "refreshed", planned: "would refresh", tally: "refreshed" },
  unsettled: { done: "left", planned: "would leave", after: "settle it by hand", tally: "left unsettled" },
  duplicate: { done: "check", planned: "would ask to check", tally: "found duplicated" },
};

/** How the person running recovery runs it again: `npx dmarc-recover --stack dev`, or the executable's `recover`. */
export interface RecoverInvocation {
  command: string;
  stackName: string;
  /**
   * The whole command line that recovers the stack again, when that is not
   * `<command> --stack <stackName>`: a fleet's shard is recovered by the
   * fleet's own command (`npx dmarc-fleet up ...`), which passes `--adopt`
   * and `--drop` on to it.
   */
  rerun?: string;
}

/** The candidates an unsettled create found, and the two commands that settle it. */
function settleByHand(step: SettlementStep, again: RecoverInvocation): string[] {
  if (!step.candidates) return [];
  const rerun = again.rerun ?? `${again.command} --stack ${shellWord(again.stackName)}`;
  const adoptable = step.candidates.filter(
    (candidate) => candidate.verdict === "proven" || candidate.verdict === "unproven",
  );
  return [
    ...step.candidates.map((candidate) => `${" ".repeat(15)}found ${describeJudged(candidate)}`),
    ...adoptable.map(
      (candidate) =>
        `${" ".repeat(15)}to adopt ${candidate.id}: ${rerun} --adopt ${shellWord(`${step.urn}=${candidate.id}`)}`,
    ),
    `${" ".repeat(15)}to drop it (the next pulumi up makes a new one): ${rerun} --drop ${shellWord(step.urn)}`,
  ];
}

function stepLines(step: SettlementStep, planned: boolean, again: RecoverInvocation): string[] {
  const verb = SETTLEMENT_WORDS[step.action];
  const what = `${resourceName(step.urn)} (${step.typeName}${step.id ? ` ${step.id}` : ""})`;
  return [
    `${(planned ? verb.planned : verb.done).padEnd(14)} ${what}: ${step.reason}${verb.after ? `; ${verb.after}` : ""}`,
    ...settleByHand(step, again),
  ];
}

function checkpointLine(repair: NonNullable<RecoveryReport["checkpoint"]>, planned: boolean): string {
  const file = shownPath(repair.file);
  if (repair.broken === "attributes") {
    return `${planned ? "would repair" : "repaired"} ${file}: the kill cut its attributes file (${file}.attrs) short; ${planned ? "would remove" : "removed"} it, the checkpoint itself is whole`;
  }
  return `${planned ? "would restore" : "restored"} ${file} from ${repair.backup === undefined ? "its backup" : shownPath(repair.backup)}: the kill cut the checkpoint short`;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

function describeProcess(found: RunProcess): string {
  return `${found.role}: ${found.command}`;
}

const STOPPED_BY: Record<StoppedBy, string> = {
  exited: "it ended by itself",
  SIGTERM: "stopped with SIGTERM",
  SIGKILL: "stopped with SIGKILL (SIGTERM did not end it)",
};

function orphanLine(orphan: RunProcess | StoppedOrphan, boundMs: number): string {
  const what = `pid ${orphan.pid} (${describeProcess(orphan)}) of a killed run, whose engine is gone`;
  if (!("stoppedBy" in orphan)) {
    return `${"would stop".padEnd(14)} ${what}, once it holds no open connection (at most ${seconds(boundMs)}, the provider's timeouts and retry budget)`;
  }
  return `${"stopped".padEnd(14)} ${what}: waited ${seconds(orphan.waitedMs)} for its calls, then ${STOPPED_BY[orphan.stoppedBy]}`;
}

export function formatReport(
  report: RecoveryReport,
  again: RecoverInvocation = { command: "npx dmarc-recover", stackName: report.stackName },
): string[] {
  const stack = `stack ${report.stackName}`;
  if (report.outcome === "refused") {
    return [
      ...report.liveLocks.map(
        (lock) =>
          `refused: ${stack} is locked by ${describeLock(lock)}, ${
            lock.holder === "alive"
              ? "a pulumi process that is still running"
              : "taken on another host, which this command cannot check (if no run is alive there, rerun with --unlock-other-hosts)"
          }`,
      ),
      ...report.liveProcesses.map(
        (found) =>
          `refused: pid ${found.pid} (${describeProcess(found)}) belongs to a run that is still alive: its engine (${found.engineAddress ?? "address unknown"}) still answers`,
      ),
      ...report.orphans.map(
        (orphan) =>
          `refused: pid ${orphan.pid} (${describeProcess(orphan)}) of a killed run is left running (--keep-orphans); its engine is gone. Run without --keep-orphans to give it ${seconds(report.orphanBoundMs ?? 0)} at most to finish its calls and stop it, or stop it yourself (kill ${orphan.pid})`,
      ),
      `Nothing changed. Run dmarc-recover again once ${report.liveLocks.length + report.liveProcesses.length > 0 ? "that run has ended" : "those processes are stopped"}.`,
    ];
  }
  if (report.outcome === "healthy") {
    return [`${stack}: nothing to recover (no lock left behind, no pending operation). Nothing changed.`];
  }
  const planned = report.outcome === "planned";
  const lines = [
    ...report.orphans.map((orphan) => orphanLine(orphan, report.orphanBoundMs ?? 0)),
    ...(report.checkpoint ? [checkpointLine(report.checkpoint, planned)] : []),
    ...report.deadLocks.map(
      (lock) => `${planned ? "would remove" : "removed"} the lock of ${describeLock(lock)}: that run is gone`,
    ),
    ...(report.weighed ? [report.weighed] : []),
    ...report.steps.flatMap((step) => stepLines(step, planned, again)),
  ];
  if (planned) return [...lines, "Dry run: nothing changed. Run without --dry-run to do this."];
  return [
    ...lines,
    ...(report.startingState ? [`The state recovery started from is kept in ${report.startingState}`] : []),
    `Next: ${report.next}`,
  ];
}
