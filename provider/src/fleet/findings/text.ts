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

// The findings on a terminal or in a CI log: offboardings first, then every
// tenant with something to report, its objects one a line, the tenants of
// the shards skipped as unchanged, then the totals.

function objectLines(mark: string, object: ObjectChange, list: FindingsList): string[] {
  const { line, properties } = objectWords(object, list);
  return [`    ${mark} ${line}`, ...properties.map((property) => `        ${propertyText(property)}`)];
}

function tenantLines(tenant: TenantFindings): string[] {
  const lines = [`  ${tenant.key} (${tenant.shard}): ${tenantSummary(tenant)}`];
  const offboarding = tenant.offboarding;
  if (offboarding) {
    lines.push(`    ${approvalText(tenant)}`);
    lines.push(`    ${offboarding.status === "refused" ? "would go" : "goes"}: ${offboarding.goes}`);
    for (const object of offboarding.objects) lines.push(...objectLines("-", object, "deleted"));
  }
  for (const { list, mark } of LISTS) {
    if (offboarding && list === "deleted") continue;
    for (const object of tenant[list]) lines.push(...objectLines(mark, object, list));
  }
  return lines;
}

/** The findings as plain lines under `heading` (e.g. "Plan per tenant"). */
export function findingsText(findings: FleetFindings, heading: string): string {
  const lines = [`${heading}:`];
  if (findings.tenants.length === 0) lines.push("  nothing to report");
  for (const tenant of findings.tenants) lines.push(...tenantLines(tenant));
  if (findings.unchanged) {
    lines.push(unchangedHeading(findings.unchanged));
    for (const { shard, evidence, tenants } of findings.unchanged)
      lines.push(`  ${shard}: ${evidence}: ${tenants.join(" ")}`);
  }
  if (findings.unmanaged) {
    const { managed, total, organizations } = findings.unmanaged;
    lines.push(
      `Organisations of the account: ${total}, ${managed} managed by the fleet, ${organizations.length} unmanaged`,
    );
    for (const organization of organizations) lines.push(`  ${organization.id} "${organization.name}"`);
  }
  for (const tombstone of findings.removableTombstones)
    lines.push(`The tombstone of "${tombstone.key}" can be removed from the inventory: ${tombstone.reason}.`);
  for (const note of findings.notes) lines.push(`Note: ${note}`);
  lines.push(`Totals: ${totalsText(findings.totals)}`);
  return lines.join("\n");
}
