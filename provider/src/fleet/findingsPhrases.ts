import type { FindingsTotals, ObjectChange, TenantFindings } from "./findings";
import type { PropertyChange, StepKind } from "./stepLog";

// The words the terminal summary and the pull-request comment share, so the
// two views of the findings say the same thing the same way.

/** Each list of a tenant's findings: its mark and its heading. */
export const LISTS: readonly { list: keyof TenantFindings & string; kind: StepKind; mark: string; heading: string }[] =
  [
    { list: "created", kind: "create", mark: "+", heading: "created" },
    { list: "updated", kind: "update", mark: "~", heading: "updated" },
    { list: "replaced", kind: "replace", mark: "+-", heading: "replaced" },
    { list: "deleted", kind: "delete", mark: "-", heading: "deleted" },
    { list: "differs", kind: "differs", mark: "!", heading: "differs from the state" },
    { list: "missing", kind: "missing", mark: "!-", heading: "missing on the service" },
  ];

/** Longest value shown in full; longer ones are cut with an ellipsis. */
const VALUE_WIDTH = 120;

export function valueText(value: unknown): string {
  if (value === "[secret]" || value === "[unknown]") return String(value);
  const text = JSON.stringify(value) ?? "undefined";
  return text.length > VALUE_WIDTH ? `${text.slice(0, VALUE_WIDTH - 1)}…` : text;
}

/** `name: "old" → "new"`, `name: "new"` (declared), `name: "old" → (none)`. */
export function propertyText(property: PropertyChange, quote: (text: string) => string = (text) => text): string {
  const old = "old" in property ? quote(valueText(property.old)) : undefined;
  const next = "new" in property ? quote(valueText(property.new)) : "(none)";
  return `${property.name}: ${old === undefined ? next : `${old} → ${next}`}`;
}

export function objectLabel(object: ObjectChange): string {
  return object.type === "Organization" && object.id
    ? `${object.type} ${object.name} (${object.id})`
    : `${object.type} ${object.name}`;
}

/** What is planned for, or was done to, the tenant in a few words: `offboard, irreversible`, `new`, `drift`. */
export function tenantSummary(tenant: TenantFindings): string {
  const offboarding = tenant.offboarding;
  if (offboarding?.status === "refused") return "offboarding REFUSED";
  if (offboarding) return offboarding.irreversible ? "offboard, irreversible" : "offboard (onDelete: keep)";
  const parts = LISTS.filter(({ list }) => (tenant[list] as ObjectChange[]).length > 0).map(
    ({ list, heading }) => `${(tenant[list] as ObjectChange[]).length} ${heading}`,
  );
  return [tenant.new ? "new" : undefined, ...parts].filter((part) => part !== undefined).join(", ");
}

export function approvalText(tenant: TenantFindings): string {
  const offboarding = tenant.offboarding;
  if (!offboarding) return "";
  if (offboarding.status === "refused") return `refused: ${offboarding.refusal ?? ""}`;
  const details = [offboarding.note ? `"${offboarding.note}"` : undefined, offboarding.date].filter(Boolean);
  const by = offboarding.approvedBy === "tombstone" ? "its tombstone (offboard:)" : "--allow-offboard";
  return `approved by ${by}${details.length > 0 ? ` (${details.join(", ")})` : ""}`;
}

export function totalsText(totals: FindingsTotals): string {
  const { tenants, objects } = totals;
  return [
    `tenants: ${tenants.new} new, ${tenants.changed} changed, ${tenants.offboarding} offboarding, ${tenants.refused} offboarding refused, ${tenants.drifted} drifted`,
    `objects: ${LISTS.map(({ kind, heading }) => `${objects[kind]} ${heading}`).join(", ")}`,
  ].join("; ");
}
