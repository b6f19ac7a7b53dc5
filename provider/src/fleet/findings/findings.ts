import type { InventoryTombstone } from "../../inventory/inventory";
import type { TenantOnDelete } from "../../tenant/tenant";
import { type Approval, deleteEffect, OFFBOARDING_EFFECTS, type OffboardingDecision } from "../plan/offboardingGate";
import type { PropertyChange, ResourceStep, StepKind } from "../shard/stepLog";
import { isTenantType } from "../shard/tenantHoldings";

// What a fleet command learns per tenant (the planned or applied steps, the
// offboardings and their approval, drift) as one structure; the terminal
// summary, the pull-request comment and `--json` are views of it. Its shape
// is versioned by FINDINGS_FORMAT_VERSION and documented in
// docs/guides/gitops.md.

/** Raised when a field of the findings changes meaning or goes; added fields keep the version. */
export const FINDINGS_FORMAT_VERSION = 1;

export interface ObjectChange {
  /** `Organization`, `Domain`...; another package's full type token. */
  type: string;
  /** The resource name: `acme`, `acme/group`, `acme.example`. */
  name: string;
  id?: string;
  /** Changed properties (updated, replaced, differs) or declared ones (created); secret values read `"[secret]"`. */
  properties?: PropertyChange[];
  /** What deleting it does on the service (deleted). */
  effect?: string;
}

export interface TenantOffboarding {
  status: "approved" | "refused";
  approvedBy?: Approval;
  /** The tombstone's note and date, when it approved it. */
  note?: string;
  date?: string;
  refusal?: string;
  /** As last deployed. */
  onDelete: TenantOnDelete;
  /** What goes on the service. */
  goes: string;
  irreversible: boolean;
  /** Every object its shard's state holds, with what deleting it does. */
  objects: ObjectChange[];
}

export interface TenantFindings {
  key: string;
  shard: string;
  /** Its component is created: a tenant new to the fleet. */
  new?: true;
  /** Present when the tenant is deployed but no longer in the inventory. */
  offboarding?: TenantOffboarding;
  created: ObjectChange[];
  updated: ObjectChange[];
  replaced: ObjectChange[];
  deleted: ObjectChange[];
  /** Drift: objects the service holds otherwise than the shard's state records. */
  differs: ObjectChange[];
  /** Drift: objects the state records that the service no longer has. */
  missing: ObjectChange[];
}

/** The account's organisations against those the shards manage (drift). */
export interface UnmanagedOrganizations {
  managed: number;
  total: number;
  /** The organisations no shard's state holds. */
  organizations: { id: string; name: string }[];
}

/** A shard the run left alone as unchanged since its last `up`, with the evidence, and its tenants. */
export interface UnchangedShard {
  shard: string;
  /** Its `up` mark's account of it: `unchanged since its last up at <time> (digest <digest>)`. */
  evidence: string;
  tenants: string[];
}

export interface FindingsTotals {
  tenants: { new: number; changed: number; offboarding: number; refused: number; drifted: number };
  objects: Record<StepKind, number>;
}

export interface FleetFindings {
  formatVersion: typeof FINDINGS_FORMAT_VERSION;
  /** Tenants with something to report: offboardings first, then by key. */
  tenants: TenantFindings[];
  totals: FindingsTotals;
  /** Tombstones whose tenant no shard holds any more (or this run offboarded): they can be removed from the inventory. */
  removableTombstones: { key: string; reason: string }[];
  /** Anything else the run wants read: approvals that matched nothing. */
  notes: string[];
  unmanaged?: UnmanagedOrganizations;
  /** The shards `preview` or `up` skipped as unchanged since their last `up`: their tenants have nothing to report. */
  unchanged?: UnchangedShard[];
}

const STEP_LISTS: Record<
  StepKind,
  keyof Pick<TenantFindings, "created" | "updated" | "replaced" | "deleted" | "differs" | "missing">
> = {
  create: "created",
  update: "updated",
  replace: "replaced",
  delete: "deleted",
  differs: "differs",
  missing: "missing",
};

function emptyFindings(key: string, shard: string): TenantFindings {
  return { key, shard, created: [], updated: [], replaced: [], deleted: [], differs: [], missing: [] };
}

function offboardingOf(decision: OffboardingDecision): TenantOffboarding {
  const onDelete = decision.holding?.onDelete ?? "delete";
  const { goes, irreversible } = OFFBOARDING_EFFECTS[onDelete];
  return {
    status: decision.refusal === undefined ? "approved" : "refused",
    ...(decision.approvedBy && decision.refusal === undefined ? { approvedBy: decision.approvedBy } : {}),
    ...(decision.tombstone?.note ? { note: decision.tombstone.note } : {}),
    ...(decision.tombstone?.date ? { date: decision.tombstone.date } : {}),
    ...(decision.refusal ? { refusal: decision.refusal } : {}),
    onDelete,
    goes,
    irreversible,
    objects: (decision.holding?.objects ?? []).map((object) => ({
      type: object.type,
      name: object.name,
      ...(object.id ? { id: object.id } : {}),
      effect: deleteEffect(object, onDelete),
    })),
  };
}

function changeOf(step: ResourceStep, onDelete: TenantOnDelete | undefined): ObjectChange {
  return {
    type: step.type,
    name: step.name,
    ...(step.id ? { id: step.id } : {}),
    ...(step.properties.length > 0 ? { properties: step.properties } : {}),
    ...(step.kind === "delete"
      ? { effect: deleteEffect({ type: step.type, retained: step.retained === true }, onDelete ?? "delete") }
      : {}),
  };
}

function hasChanges(tenant: TenantFindings): boolean {
  return Object.values(STEP_LISTS).some((list) => tenant[list].length > 0) || tenant.offboarding !== undefined;
}

export interface FindingsInputs {
  steps: readonly ResourceStep[];
  decisions: readonly OffboardingDecision[];
  tombstones: readonly InventoryTombstone[];
  /** Every tenant key the shards' states held when the run started. */
  deployed: ReadonlySet<string>;
  /** `--allow-offboard` keys. */
  allowed: readonly string[];
  /** The steps were carried out (`up`), not planned: an offboarding done frees its tombstone. */
  applied: boolean;
  unmanaged?: UnmanagedOrganizations;
  unchanged?: UnchangedShard[];
}

function totalsOf(tenants: readonly TenantFindings[]): FindingsTotals {
  const objects = Object.fromEntries(
    Object.entries(STEP_LISTS).map(([kind, list]) => [kind, tenants.reduce((sum, t) => sum + t[list].length, 0)]),
  ) as Record<StepKind, number>;
  const count = (test: (tenant: TenantFindings) => boolean) => tenants.filter(test).length;
  return {
    tenants: {
      new: count((t) => t.new === true),
      changed: count(
        (t) =>
          !t.new && !t.offboarding && t.created.length + t.updated.length + t.replaced.length + t.deleted.length > 0,
      ),
      offboarding: count((t) => t.offboarding?.status === "approved"),
      refused: count((t) => t.offboarding?.status === "refused"),
      drifted: count((t) => t.differs.length + t.missing.length > 0),
    },
    objects,
  };
}

/** The run's findings, per tenant, from its steps and its offboarding decisions. */
export function fleetFindings(inputs: FindingsInputs): FleetFindings {
  const byKey = new Map<string, TenantFindings>();
  const tenantOf = (key: string, shard: string) => {
    let found = byKey.get(key);
    if (!found) {
      found = emptyFindings(key, shard);
      byKey.set(key, found);
    }
    return found;
  };
  const onDeletes = new Map(inputs.decisions.map((decision) => [decision.key, decision.holding?.onDelete]));
  for (const decision of inputs.decisions) tenantOf(decision.key, decision.shard).offboarding = offboardingOf(decision);
  const offboarded = new Set<string>();
  for (const step of inputs.steps) {
    if (step.tenant === undefined) continue;
    const tenant = tenantOf(step.tenant, step.shard);
    if (isTenantType(step.type)) {
      if (step.kind === "create") tenant.new = true;
      if (step.kind === "delete") offboarded.add(step.tenant);
      continue;
    }
    tenant[STEP_LISTS[step.kind]].push(changeOf(step, onDeletes.get(step.tenant)));
  }
  const tenants = [...byKey.values()]
    .filter(hasChanges)
    .sort((a, b) => Number(!a.offboarding) - Number(!b.offboarding) || a.key.localeCompare(b.key));
  const removableTombstones = inputs.tombstones.flatMap((tombstone) => {
    if (!inputs.deployed.has(tombstone.key)) return [{ key: tombstone.key, reason: "no shard holds it" }];
    if (inputs.applied && offboarded.has(tombstone.key))
      return [{ key: tombstone.key, reason: "offboarded by this run" }];
    return [];
  });
  const leaving = new Set(inputs.decisions.map((decision) => decision.key));
  const notes = inputs.allowed
    .filter((key) => !leaving.has(key))
    .map((key) => `--allow-offboard ${key}: no shard of this run offboards a tenant "${key}"`);
  return {
    formatVersion: FINDINGS_FORMAT_VERSION,
    tenants,
    totals: totalsOf(tenants),
    removableTombstones,
    notes,
    ...(inputs.unmanaged ? { unmanaged: inputs.unmanaged } : {}),
    ...(inputs.unchanged && inputs.unchanged.length > 0 ? { unchanged: inputs.unchanged } : {}),
  };
}
