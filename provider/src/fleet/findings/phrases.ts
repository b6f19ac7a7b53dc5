import { shortened } from "../../cli/shown";
import { policyText, withoutPolicyTags } from "../../tenant/policy";
import type { PropertyChange, StepKind } from "../shard/stepLog";
import type { FindingsTotals, ObjectChange, TenantFindings, UnchangedShard } from "./findings";

// The words the terminal summary and the pull-request comment share, so the
// two views of the findings say the same thing the same way.

/** Each list of a tenant's findings: its mark and its heading. */
export const LISTS = [
  { list: "created", kind: "create", mark: "+", heading: "created" },
  { list: "updated", kind: "update", mark: "~", heading: "updated" },
  { list: "replaced", kind: "replace", mark: "+-", heading: "replaced" },
  { list: "deleted", kind: "delete", mark: "-", heading: "deleted" },
  { list: "differs", kind: "differs", mark: "!", heading: "differs from the state" },
  { list: "missing", kind: "missing", mark: "!-", heading: "missing on the service" },
] as const satisfies readonly { list: keyof TenantFindings; kind: StepKind; mark: string; heading: string }[];

/** Longest value shown in full; longer ones lose their middle to an ellipsis. */
const VALUE_WIDTH = 120;

function valueText(value: unknown): string {
  if (value === "[secret]" || value === "[unknown]") return String(value);
  const text = JSON.stringify(value) ?? "undefined";
  return shortened(text, VALUE_WIDTH);
}

/** `name: "old" → "new"`, `name: "new"` (declared), `name: "old" → (none)`. */
export function propertyText(property: PropertyChange, quote: (text: string) => string = (text) => text): string {
  const old = "old" in property ? quote(valueText(property.old)) : undefined;
  const next = "new" in property ? quote(valueText(property.new)) : "(none)";
  return `${property.name}: ${old === undefined ? next : `${old} → ${next}`}`;
}

/** A list of a tenant's findings, or `deleted` for the objects an offboarding removes. */
export type FindingsList = (typeof LISTS)[number]["list"];

/**
 * How both views word an object of a type: its label, what the step does to
 * it (after the label), and which of its declared properties a create shows.
 * Types without an entry read `<type> <name>`, the effect of a delete, and
 * every property.
 */
interface ObjectWording {
  label(object: ObjectChange): string;
  action?: Partial<Record<FindingsList, (object: ObjectChange) => string>>;
  declared?: readonly string[];
}

function propertyValue(object: ObjectChange, name: string): unknown {
  const property = object.properties?.find((candidate) => candidate.name === name);
  return property && ("new" in property ? property.new : property.old);
}

function changedNames(object: ObjectChange): string {
  return (object.properties ?? []).map((property) => property.name).join(", ");
}

/**
 * `policy none → quarantine (pct 25)` when a record's value changes only in
 * its policy tags: a ramp's move in a plan, a hand edit in drift.
 */
function policyMove(object: ObjectChange): string | undefined {
  const [value, ...others] = object.properties ?? [];
  if (value?.name !== "value" || others.length > 0) return undefined;
  const { old, new: next } = value;
  if (typeof old !== "string" || typeof next !== "string") return undefined;
  if (withoutPolicyTags(old) !== withoutPolicyTags(next)) return undefined;
  return `policy ${policyText(old)} → ${policyText(next)}`;
}

/** `record _dmarc.acme.example TXT`: a DNS record by the name it has in its zone (its id), and its type when the step shows it. */
function recordLabel(object: ObjectChange): string {
  const type = propertyValue(object, "type");
  const host = propertyValue(object, "name") ?? object.id ?? object.name;
  return `record ${String(host)}${typeof type === "string" ? ` ${type}` : ""}`;
}

const WORDINGS: Record<string, ObjectWording> = {
  Organization: {
    label: (object) => (object.id ? `Organization ${object.name} (${object.id})` : `Organization ${object.name}`),
  },
  Rfc2136Record: {
    label: recordLabel,
    action: {
      created: () => "create",
      updated: (object) => policyMove(object) ?? `update ${changedNames(object)}`,
      replaced: () => "replace",
      differs: (object) => `changed on the server (${policyMove(object) ?? changedNames(object)})`,
      missing: () => "removed from the server",
    },
    declared: ["value", "ttl", "server", "zone"],
  },
};

function objectLabel(object: ObjectChange): string {
  return WORDINGS[object.type]?.label(object) ?? `${object.type} ${object.name}`;
}

/** One object's line of a list (its label and what happens to it) and the properties shown under it. */
export function objectWords(
  object: ObjectChange,
  list: FindingsList,
): { line: string; properties: readonly PropertyChange[] } {
  const wording = WORDINGS[object.type];
  const action = wording?.action?.[list]?.(object) ?? object.effect;
  const declared = list === "created" ? wording?.declared : undefined;
  const properties = (object.properties ?? []).filter((property) => !declared || declared.includes(property.name));
  return { line: `${objectLabel(object)}${action ? `: ${action}` : ""}`, properties };
}

/** What is planned for, or was done to, the tenant in a few words: `offboard, irreversible`, `new`, `drift`. */
export function tenantSummary(tenant: TenantFindings): string {
  const offboarding = tenant.offboarding;
  if (offboarding?.status === "refused") return "offboarding REFUSED";
  if (offboarding) return offboarding.irreversible ? "offboard, irreversible" : "offboard (onDelete: keep)";
  const parts = LISTS.filter(({ list }) => tenant[list].length > 0).map(
    ({ list, heading }) => `${tenant[list].length} ${heading}`,
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

/** The line over the shards a run skipped as unchanged: their tenants are not left out, only not run. */
export function unchangedHeading(unchanged: readonly UnchangedShard[]): string {
  const tenants = unchanged.reduce((sum, shard) => sum + shard.tenants.length, 0);
  return `Unchanged, not run: ${tenants} tenant(s) in ${unchanged.length} shard(s) whose last up deployed them as they are`;
}
