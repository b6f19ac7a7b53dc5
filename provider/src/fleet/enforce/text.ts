import { countsOf, type DecisionCounts, type EnforceReport, movesCount } from "./enforce";
import { type Decision, decisionText, MOVES } from "./ramp";

// `enforce`'s report as the terminal shows it and as a pull request's body.

/** Each kind of decision: how the summary counts it, and its mark in the lists. */
const KINDS: readonly { kind: Decision["kind"]; counted: string; mark: string }[] = [
  { kind: "advance", counted: "advance", mark: "↑" },
  { kind: "back", counted: "step back", mark: "↓" },
  { kind: "start", counted: "start", mark: "+" },
  { kind: "hold", counted: "hold", mark: "=" },
  { kind: "target", counted: "at target", mark: "✓" },
];

function countsText(counts: DecisionCounts): string {
  return KINDS.filter(({ kind }) => counts[kind] > 0)
    .map(({ kind, counted }) => `${counts[kind]} ${counted}`)
    .join(", ");
}

const markOf = (decision: Decision) => KINDS.find(({ kind }) => kind === decision.kind)?.mark ?? "";

function readText(report: EnforceReport): string {
  const { domains, requests, failed } = report.read;
  const failures = failed > 0 ? `, ${failed} could not be read (held)` : "";
  return `evidence of ${domains} domain(s) read in ${requests} request(s)${failures}`;
}

/** The file the moves go to, and what publishes them once merged. */
function fileOf(report: EnforceReport): { file: string; publish: string } {
  return "inventory" in report
    ? { file: report.inventory, publish: "dmarc-fleet up" }
    : { file: report.config, publish: `pulumi up --stack ${report.stack}` };
}

function writtenText(report: EnforceReport): string {
  const moves = movesCount(report.totals);
  const { file, publish } = fileOf(report);
  if (moves === 0) return `no moves: ${file} stays as it is`;
  return report.written
    ? `${moves} move(s) written to ${file}: merge, then ${publish} republishes those records`
    : `${moves} move(s) proposed; --write puts them in ${file}`;
}

/** The summary per tenant, each domain's decision in numbers. */
export function enforceText(report: EnforceReport): string {
  const tenants = report.tenants.map((tenant) => {
    const lines = tenant.domains.map(
      ({ domain, decision }) => `  ${markOf(decision)} ${domain}: ${decisionText(decision)}`,
    );
    return [`${tenant.name} (${tenant.key}): ${countsText(countsOf([tenant]))}`, ...lines].join("\n");
  });
  return [
    `Policy ramp on ${report.today}: ${readText(report)}`,
    ...tenants,
    `totals: ${countsText(report.totals) || "no domain has a ramp"}`,
    writtenText(report),
  ].join("\n\n");
}

const cell = (text: string) => text.replaceAll("|", "\\|");

/** The pull request's body: the moves first, then what holds and why. */
export function enforceMarkdown(report: EnforceReport): string {
  const rows = (kinds: readonly Decision["kind"][]) =>
    report.tenants.flatMap((tenant) =>
      tenant.domains
        .filter(({ decision }) => kinds.includes(decision.kind))
        .map(({ domain, decision }) => `| ${cell(tenant.name)} | \`${domain}\` | ${cell(decisionText(decision))} |`),
    );
  const group = "inventory" in report ? "tenant" : "stack";
  const table = (heading: string, lines: string[]) =>
    lines.length === 0
      ? []
      : [`### ${heading}`, "", `| ${group} | domain | decision |`, "| --- | --- | --- |", ...lines, ""];
  return [
    `## DMARC policy ramp, ${report.today}`,
    "",
    `${countsText(report.totals) || "No domain has a ramp"}; ${readText(report)}.`,
    "",
    ...table("Moves", rows(MOVES)),
    ...table("Holding", rows(["hold"])),
    "inventory" in report
      ? "Merging this pull request changes each moved domain's `policy.stage` and `policy.since`; `dmarc-fleet up` then republishes those records, and only their shards run."
      : `Merging this pull request changes each moved domain's \`stage\` and \`since\` in \`${report.config}\`; \`pulumi up --stack ${report.stack}\` then republishes those records.`,
  ].join("\n");
}
