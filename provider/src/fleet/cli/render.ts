import { writeFileSync } from "node:fs";
import { findingsMarkdown } from "../findings/markdown";
import { findingsText } from "../findings/text";
import type { FleetCommand } from "../fleetOptions";
import type { FleetReport } from "../fleetReport";
import { summaryTable } from "../progress";

// A fleet command's report as `dmarc-fleet` prints it: the overview of the
// shards, the summary and findings per tenant, JSON, the pull-request comment.

function overviewTable(report: FleetReport): string {
  const lines = report.shards.map((shard) => {
    const state = shard.upToDate ? "up to date" : `due: ${shard.due ?? "changed"}`;
    const leaving = shard.leaving.length > 0 ? `, leaving: ${shard.leaving.join(" ")}` : "";
    return `${shard.name}  ${String(shard.tenants.length).padStart(4)} tenants  ${state}${leaving}`;
  });
  return [
    `fleet ${report.fleet}: ${report.shards.length} shard(s) of at most ${report.shardSize} tenants`,
    ...lines,
  ].join("\n");
}

/** What the findings are called under each command that reports them. */
const FINDINGS_HEADINGS: Partial<Record<FleetCommand, string>> = {
  preview: "Plan per tenant",
  up: "Done per tenant",
  refresh: "Drift taken into the state, per tenant",
  drift: "Drift per tenant",
  destroy: "Destroyed per tenant",
};

/** Writes the pull-request comment; when it had to leave tenants out, the complete one goes next to it. */
export function writeComment(report: FleetReport, file: string): void {
  const fullReport = file.replace(/(\.md)?$/, ".full.md");
  const subject = { command: report.command, fleet: report.fleet, results: report.results, findings: report };
  const comment = findingsMarkdown(subject, { fullReport });
  const complete = findingsMarkdown(subject, { fullReport, limit: Number.POSITIVE_INFINITY });
  writeFileSync(file, `${comment}\n`);
  if (comment !== complete) writeFileSync(fullReport, `${complete}\n`);
}

export function printReport(report: FleetReport, json: boolean): void {
  const { command } = report;
  if (json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else if (command === "shards" || command === "status") process.stdout.write(`${overviewTable(report)}\n`);
  else {
    const heading = FINDINGS_HEADINGS[command];
    const findings = heading ? `\n\n${findingsText(report, heading)}` : "";
    process.stdout.write(`${summaryTable(report.results)}${findings}\n`);
  }
}
