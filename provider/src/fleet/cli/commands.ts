import { writeFileSync } from "node:fs";
import { type ExitCode, UsageError } from "../../cli/options";
import { type ImportReport, importSummary } from "../../discovery/report";
import { InventoryError } from "../../inventory/inventory";
import { ShardNotRecovered } from "../../recovery/shard";
import { PolicyError } from "../../tenant/staging";
import { type EnforceReport, movesCount, runEnforce } from "../enforce/enforce";
import { runStackEnforce } from "../enforce/stack";
import { enforceMarkdown, enforceText } from "../enforce/text";
import { concurrencyOf, scanOf, settingsOf } from "../fleetOptions";
import type { FleetReport } from "../fleetReport";
import type { FleetPage } from "../page/model";
import { buildFleetPage, writeFleetPage } from "../page/report";
import { OwnershipConflict } from "../plan/ownership";
import { runFleet } from "../runner";
import type { EnforceInvocation, FleetInvocation, ImportInvocation, ReportInvocation } from "./arguments";
import { ENFORCE_COMMAND, FLEET_EXIT, IMPORT_COMMAND, REPORT_COMMAND } from "./commandSpec";
import { ImportRefused, runImport } from "./import";
import { printReport, writeComment } from "./render";

// Each of `dmarc-fleet`'s commands once its arguments are read: runs it,
// prints its report, and answers its exit code.

const isBadInput = (error: unknown) =>
  error instanceof UsageError ||
  error instanceof InventoryError ||
  error instanceof PolicyError ||
  error instanceof ImportRefused;

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Errors that leave a decision to a person: a tenant declared in two places, creates a recovery left unsettled. */
const needsPerson = (error: unknown) =>
  error instanceof OwnershipConflict || (error instanceof ShardNotRecovered && error.needsPerson);

/** The exit code of a command that failed: bad input is usage, a person's decision its own, anything else a failure. */
export function failureCode(error: unknown): number {
  if (needsPerson(error)) return FLEET_EXIT.person.code;
  return isBadInput(error) ? FLEET_EXIT.usage.code : FLEET_EXIT.failed.code;
}

/** The findings that end a run with their own code, the most pressing first; a failed shard outranks them all. */
const FINDING_EXITS: readonly {
  exit: ExitCode;
  found: (report: FleetReport, invocation: FleetInvocation) => boolean;
}[] = [
  { exit: FLEET_EXIT.refused, found: (report) => report.totals.tenants.refused > 0 },
  {
    exit: FLEET_EXIT.drift,
    found: (report, invocation) =>
      report.command === "drift" &&
      (report.totals.objects.differs + report.totals.objects.missing > 0 ||
        (invocation.failOnUnmanaged && (report.unmanaged?.organizations.length ?? 0) > 0)),
  },
  {
    exit: FLEET_EXIT.changes,
    found: (report, invocation) => {
      const { create, update, replace, delete: deleted } = report.totals.objects;
      return invocation.detailedExitcode && create + update + replace + deleted > 0;
    },
  },
];

export function exitCodeOf(report: FleetReport, invocation: FleetInvocation): number {
  if (report.results.some((result) => result.unsettled !== undefined)) return FLEET_EXIT.person.code;
  if (!report.ok) return FLEET_EXIT.failed.code;
  return (FINDING_EXITS.find((entry) => entry.found(report, invocation))?.exit ?? FLEET_EXIT.ok).code;
}

/** A fleet command: the runner over the shards, its report printed (and the comment written). */
export async function fleetCommand(invocation: FleetInvocation): Promise<number> {
  const { command, options } = invocation;
  let report: FleetReport;
  try {
    report = await runFleet(command, options);
  } catch (error) {
    process.stderr.write(`dmarc-fleet ${command}: ${errorMessage(error)}\n`);
    return failureCode(error);
  }
  printReport(report, invocation.json);
  if (invocation.markdown) writeComment(report, invocation.markdown);
  return exitCodeOf(report, invocation);
}

/** `import`: the account written into the inventory, its summary printed. */
export async function importCommand({ options, json }: ImportInvocation): Promise<number> {
  let report: ImportReport;
  try {
    report = await runImport(options);
  } catch (error) {
    process.stderr.write(`dmarc-fleet ${IMPORT_COMMAND}: ${errorMessage(error)}\n`);
    return failureCode(error);
  }
  process.stdout.write(`${json ? JSON.stringify(report, null, 2) : importSummary(report)}\n`);
  return report.failedChecks > 0 ? FLEET_EXIT.failed.code : FLEET_EXIT.ok.code;
}

/** `enforce`'s exit: a failed evidence read is a failure (its domains held); else moves proposed, with --detailed-exitcode. */
export function enforceExitCode(report: EnforceReport, detailedExitcode: boolean): number {
  if (report.read.failed > 0) return FLEET_EXIT.failed.code;
  return detailedExitcode && movesCount(report.totals) > 0 ? FLEET_EXIT.moves.code : FLEET_EXIT.ok.code;
}

/** `enforce`: the moves the evidence supports, printed (and written, with --write); nothing is published. */
export async function enforceCommand(invocation: EnforceInvocation): Promise<number> {
  let report: EnforceReport;
  try {
    const { options } = invocation;
    report = await ("configPath" in options ? runStackEnforce(options) : runEnforce(options));
  } catch (error) {
    process.stderr.write(`dmarc-fleet ${ENFORCE_COMMAND}: ${errorMessage(error)}\n`);
    return failureCode(error);
  }
  process.stdout.write(`${invocation.json ? JSON.stringify(report, null, 2) : enforceText(report)}\n`);
  if (invocation.markdown) writeFileSync(invocation.markdown, `${enforceMarkdown(report)}\n`);
  return enforceExitCode(report, invocation.detailedExitcode);
}

/** What `report` prints without --json: where the page went, its totals, what the reads cost. */
function pageSummary(page: FleetPage, file: string | undefined): string {
  const { totals, reads } = page;
  const stages = Object.entries(totals.stages).map(([stage, count]) => `${stage} ${count}`);
  return [
    ...(file ? [`wrote ${file}`] : []),
    `fleet ${page.fleet}: ${totals.tenants} tenants, ${totals.domains} domains, ${totals.verified} verified, ${totals.published} published; ${totals.drifted} drifted, ${totals.failedShards} failed shard(s), ${totals.needsAttention} need attention`,
    `policy: ${stages.join(", ") || "no domains"}`,
    `${reads.requests} request(s) to the service${reads.failures.length > 0 ? `; ${reads.failures.length} read(s) failed, their cells read unknown:` : ""}`,
    ...reads.failures.map((failure) => `  ${failure}`),
  ].join("\n");
}

/** `report`: the fleet's page written (and its data printed); a failed read fails the command, its page still written. */
export async function reportCommand({ options, json, html, until }: ReportInvocation): Promise<number> {
  let page: FleetPage;
  try {
    const sources = {
      scan: scanOf(options),
      concurrency: concurrencyOf(options),
      settings: settingsOf(options),
      inventory: options.inventory,
    };
    page = await buildFleetPage(sources, until ? { until } : {});
  } catch (error) {
    process.stderr.write(`dmarc-fleet ${REPORT_COMMAND}: ${errorMessage(error)}\n`);
    return failureCode(error);
  }
  const file = html ? writeFleetPage(html, page) : undefined;
  if (json) {
    process.stdout.write(`${JSON.stringify(page, null, 2)}\n`);
    process.stderr.write(`${pageSummary(page, file)}\n`);
  } else process.stdout.write(`${pageSummary(page, file)}\n`);
  return page.reads.failures.length > 0 ? FLEET_EXIT.failed.code : FLEET_EXIT.ok.code;
}
