import { resourceName } from "./deployment";
import { describeLock } from "./locks";
import type { SettlementAction, SettlementStep } from "./plan";
import type { RecoveryReport } from "./recover";

// The command's output: one line per thing settled, then what to run next.

const VERBS: Record<SettlementAction, { done: string; planned: string; after?: string }> = {
  adopt: { done: "adopted", planned: "would adopt" },
  recreate: {
    done: "recreated",
    planned: "would recreate",
    after: "deleted; the next pulumi up creates it with a new secret",
  },
  drop: { done: "dropped", planned: "would drop" },
  refresh: { done: "refreshed", planned: "would refresh" },
  unsettled: { done: "left", planned: "would leave", after: "settle it by hand" },
  duplicate: { done: "check", planned: "would ask to check" },
};

function stepLine(step: SettlementStep, planned: boolean): string {
  const verb = VERBS[step.action];
  const what = `${resourceName(step.urn)} (${step.typeName}${step.id ? ` ${step.id}` : ""})`;
  return `${(planned ? verb.planned : verb.done).padEnd(14)} ${what}: ${step.reason}${verb.after ? `; ${verb.after}` : ""}`;
}

function checkpointLine(repair: NonNullable<RecoveryReport["checkpoint"]>, planned: boolean): string {
  if (repair.broken === "attributes") {
    return `${planned ? "would repair" : "repaired"} ${repair.file}: the kill cut its attributes file (${repair.file}.attrs) short; ${planned ? "would remove" : "removed"} it, the checkpoint itself is whole`;
  }
  return `${planned ? "would restore" : "restored"} ${repair.file} from ${repair.backup}: the kill cut the checkpoint short`;
}

export function formatReport(report: RecoveryReport): string[] {
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
      ...report.leftovers.map(
        (process) =>
          `refused: pid ${process.pid} (${process.command}) of a killed run still works in the project folder; give it a few seconds to finish the calls it had sent, then stop it (kill ${process.pid})`,
      ),
      "Nothing changed. Run dmarc-recover again once that run has ended.",
    ];
  }
  if (report.outcome === "healthy") {
    return [`${stack}: nothing to recover (no lock left behind, no pending operation). Nothing changed.`];
  }
  const planned = report.outcome === "planned";
  const lines = [
    ...(report.checkpoint ? [checkpointLine(report.checkpoint, planned)] : []),
    ...report.deadLocks.map(
      (lock) => `${planned ? "would remove" : "removed"} the lock of ${describeLock(lock)}: that run is gone`,
    ),
    ...report.steps.map((step) => stepLine(step, planned)),
  ];
  if (planned) return [...lines, "Dry run: nothing changed. Run without --dry-run to do this."];
  return [
    ...lines,
    ...(report.startingState ? [`The state recovery started from is kept in ${report.startingState}`] : []),
    `Next: ${report.next}`,
  ];
}
