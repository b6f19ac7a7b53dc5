import type { ShardResult } from "../result";
import type { FleetFindings, ObjectChange, TenantFindings } from "./findings";
import {
  approvalText,
  type FindingsList,
  LISTS,
  objectWords,
  propertyText,
  tenantSummary,
  totalsText,
  unchangedHeading,
} from "./phrases";

// The findings as the body of a pull-request comment: alerts for what must
// not be missed, a summary table, then one collapsible section per tenant,
// one for the shards skipped as unchanged with their tenants, and the
// totals. GitHub refuses a comment over COMMENT_LIMIT characters, so rows
// and sections that do not fit are left out, and a line says how many and
// where the full report is.

/** GitHub's limit on a comment's body. */
export const COMMENT_LIMIT = 65_536;

/** Room kept for the line saying what was left out. */
const CUT_LINE_ROOM = 400;

export interface CommentSubject {
  command: string;
  fleet: string;
  results: readonly ShardResult[];
  findings: FleetFindings;
}

export interface CommentOptions {
  /** Where the complete report is, named when something is left out. */
  fullReport: string;
  /** Default {@link COMMENT_LIMIT}. */
  limit?: number;
}

function code(text: string): string {
  return text.includes("`") ? `\`\` ${text} \`\`` : `\`${text}\``;
}

function cell(text: string): string {
  return text.replaceAll("|", "\\|").replaceAll("\n", " ");
}

function html(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

function objectItems(mark: string, object: ObjectChange, list: FindingsList): string[] {
  const { line, properties } = objectWords(object, list);
  return [`- ${mark} ${line}`, ...properties.map((property) => `  - ${propertyText(property, code)}`)];
}

function tenantSection(tenant: TenantFindings): string {
  const lines = [
    `<details><summary><b>${html(tenant.key)}</b> (${html(tenant.shard)}): ${html(tenantSummary(tenant))}</summary>`,
    "",
  ];
  const offboarding = tenant.offboarding;
  if (offboarding) {
    lines.push(
      `${approvalText(tenant)}.`,
      "",
      `${offboarding.status === "refused" ? "Would go" : "Goes"}: ${offboarding.goes}.`,
      "",
    );
    for (const object of offboarding.objects) lines.push(...objectItems("-", object, "deleted"));
  }
  for (const { list, mark, heading } of LISTS) {
    const objects = tenant[list];
    if (objects.length === 0 || (offboarding && list === "deleted")) continue;
    lines.push(`**${heading}**`, "");
    for (const object of objects) lines.push(...objectItems(mark, object, list));
    lines.push("");
  }
  lines.push("</details>");
  return lines.join("\n");
}

function tableRow(tenant: TenantFindings): string {
  const flag = tenant.offboarding?.status === "refused" ? "⛔ " : tenant.offboarding?.irreversible ? "⚠️ " : "";
  return `| ${flag}${cell(tenant.key)} | ${cell(tenant.shard)} | ${cell(tenantSummary(tenant))} |`;
}

function alerts(subject: CommentSubject): string[] {
  const { tenants } = subject.findings;
  const names = (list: readonly TenantFindings[]) => list.map((tenant) => code(tenant.key)).join(", ");
  const approved = tenants.filter((t) => t.offboarding?.status === "approved" && t.offboarding.irreversible);
  const refused = tenants.filter((t) => t.offboarding?.status === "refused");
  const failed = subject.results.filter((result) => result.status === "failed");
  const blocks: string[] = [];
  if (approved.length > 0)
    blocks.push(
      `> [!CAUTION]\n> **${approved.length} offboarding(s), irreversible:** ${names(approved)}. Their objects are deleted as listed below.`,
    );
  if (refused.length > 0)
    blocks.push(
      `> [!WARNING]\n> **${refused.length} offboarding(s) refused:** ${names(refused)}. Tombstone them under \`offboard:\` or restore their entries; the rest of the plan runs without them.`,
    );
  if (failed.length > 0)
    blocks.push(
      `> [!WARNING]\n> **${failed.length} shard(s) failed:**\n${failed.map((result) => `> - ${code(result.shard)}: ${cell(result.error ?? "unknown error")}`).join("\n")}`,
    );
  return blocks.flatMap((block) => [block, ""]);
}

function unmanagedSection(findings: FleetFindings): string[] {
  const unmanaged = findings.unmanaged;
  if (!unmanaged) return [];
  const summary = `Organisations of the account: ${unmanaged.total}, ${unmanaged.managed} managed, ${unmanaged.organizations.length} unmanaged`;
  if (unmanaged.organizations.length === 0) return [summary];
  return [
    [
      `<details><summary>${summary}</summary>`,
      "",
      ...unmanaged.organizations.map((organization) => `- ${code(organization.id)} ${html(organization.name)}`),
      "</details>",
    ].join("\n"),
  ];
}

function unchangedSection(findings: FleetFindings): string[] {
  if (!findings.unchanged) return [];
  const shards = findings.unchanged.map(
    ({ shard, evidence, tenants }) => `- ${code(shard)}: ${html(evidence)}: ${tenants.map(code).join(", ")}`,
  );
  return [
    [`<details><summary>${html(unchangedHeading(findings.unchanged))}</summary>`, "", ...shards, "</details>"].join(
      "\n",
    ),
  ];
}

/** Takes parts in order while they fit in `budget` characters; answers those taken and how many did not fit. */
function fitting(parts: readonly string[], budget: number): { taken: string[]; left: number; spent: number } {
  const taken: string[] = [];
  let spent = 0;
  for (const part of parts) {
    if (spent + part.length + 1 > budget) break;
    taken.push(part);
    spent += part.length + 1;
  }
  return { taken, left: parts.length - taken.length, spent };
}

/** The comment's body, never longer than the limit. */
export function findingsMarkdown(subject: CommentSubject, options: CommentOptions): string {
  const limit = options.limit ?? COMMENT_LIMIT;
  const { findings } = subject;
  const head = [`### dmarc-fleet ${subject.command}: fleet ${code(subject.fleet)}`, "", ...alerts(subject)];
  const table =
    findings.tenants.length === 0
      ? ["Nothing to report for any tenant.", ""]
      : ["| tenant | shard | plan |", "| --- | --- | --- |"];
  const tail = [
    "",
    ...findings.removableTombstones.map(
      (tombstone) =>
        `- The tombstone of ${code(tombstone.key)} can be removed from the inventory: ${tombstone.reason}.`,
    ),
    ...findings.notes.map((note) => `- Note: ${note}`),
    `**Totals:** ${totalsText(findings.totals)}`,
  ];
  const fixed = [...head, ...table, ...tail].join("\n").length + CUT_LINE_ROOM;
  const rows = fitting(findings.tenants.map(tableRow), limit - fixed);
  const sections = fitting(
    [...findings.tenants.map(tenantSection), ...unchangedSection(findings), ...unmanagedSection(findings)],
    limit - fixed - rows.spent - 1,
  );
  const cut =
    rows.left + sections.left === 0
      ? []
      : [
          "",
          `_Left out to stay under GitHub's ${limit.toLocaleString("en")}-character limit: ${rows.left} table row(s) and ${sections.left} section(s). The full report: ${code(options.fullReport)}._`,
        ];
  return [...head, ...table, ...rows.taken, "", ...sections.taken, ...cut, ...tail].join("\n");
}
