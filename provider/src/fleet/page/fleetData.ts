import { interruptionSummary } from "../../checkpoint/interruption";
import { type DnsPublishing, domainPolicyOf, type Inventory, type InventoryTenant } from "../../inventory/inventory";
import { stageName } from "../../tenant/policy";
import type { TenantFindings } from "../findings/findings";
import type { FleetReport } from "../fleetReport";
import type { ShardState } from "../shard/shard";
import type { TenantHolding } from "../shard/tenantHoldings";
import {
  type AttentionReason,
  FLEET_PAGE_FORMAT_VERSION,
  type FleetPage,
  type PageDomain,
  type PageShard,
  type PageTenant,
  type PageTotals,
  type Publishing,
  type StageRun,
  UNKNOWN,
  type Waiting,
} from "./model";
import { type DomainFacts, emptySeries, type ServiceFacts } from "./serviceReads";
import { shardFailures } from "./shardFailures";
import { statusOf } from "./status";

// The page's data, from what the fleet holds (the inventory, the shards'
// states and marks, the last runs' reports) and what the service answered.
// No reading here: every input is already read, so this is the one place
// that decides what a cell says.

/** What the page is made from. */
export interface PageInputs {
  fleet: string;
  inventory: Inventory;
  states: ReadonlyMap<number, ShardState>;
  /** The last kept report of each command that has one, with when it ran. */
  lastRuns: Partial<Record<"up" | "drift" | "refresh", { at: string; report: FleetReport }>>;
  facts: ServiceFacts;
  requests: number;
  now: Date;
  /** Earlier runs' policy stages, oldest first, as kept beside the fleet's state. */
  earlierRuns?: StageRun[];
}

function publishingOf(dns: DnsPublishing): Publishing {
  if (dns === "none") return { by: "none" };
  if ("publisher" in dns) return { by: "module", module: dns.publisher };
  return { by: "server", server: dns.rfc2136.server, ...(dns.rfc2136.zone ? { zone: dns.rfc2136.zone } : {}) };
}

/** What the newest kept drift or refresh report found: the drifted tenants, and the shards it looked at. */
interface DriftFound {
  tenants: Map<string, TenantFindings>;
  shards: Set<string>;
}

function lastDriftFound(inputs: PageInputs): DriftFound {
  const runs = [inputs.lastRuns.drift, inputs.lastRuns.refresh].filter((run) => run !== undefined);
  const newest = runs.sort((a, b) => b.at.localeCompare(a.at))[0]?.report;
  const drifted = (newest?.tenants ?? []).filter((found) => found.differs.length + found.missing.length > 0);
  const looked = (newest?.results ?? []).filter((result) => result.status === "done").map((result) => result.shard);
  return { tenants: new Map(drifted.map((found) => [found.key, found])), shards: new Set(looked) };
}

/**
 * Each object drift found, in words, while the tenant's shard still carries
 * the drift mark (an up heals and clears it). A marked shard the kept report
 * did not look at (another machine's run) marks each of its tenants.
 */
function driftLines(key: string, state: ShardState | undefined, found: DriftFound): string[] {
  if (!state?.driftMark) return [];
  const tenant = found.tenants.get(key);
  if (!tenant) return found.shards.has(state.name) ? [] : [`shard ${state.name}: ${state.driftMark}`];
  return [
    ...tenant.differs.map((object) => `differs ${object.type} ${object.name}`),
    ...tenant.missing.map((object) => `missing ${object.type} ${object.name}`),
  ];
}

interface TenantContext {
  state: ShardState | undefined;
  shard: PageShard | undefined;
  facts: ServiceFacts;
}

/** The stage the inventory's ramp puts the domain at, with its target; else the policy the service observes. */
function stageOf(tenant: InventoryTenant, domain: string, observed: string) {
  const policy = domainPolicyOf(tenant, domain);
  if (!policy) return { stage: observed, stageFrom: "observed" as const };
  return { stage: stageName(policy.stage), stageFrom: "inventory" as const, target: policy.target };
}

/** What the customer is sent, from the Domain the fleet's state holds; nothing when the state holds none. */
function waitingOf(domain: string, holding: TenantHolding | undefined): Waiting {
  const held = holding?.objects.find((object) => object.type === "Domain" && object.name === domain);
  return {
    ...(held?.created ? { since: held.created } : {}),
    ...(held?.setupRecord ? { record: held.setupRecord } : {}),
  };
}

function domainOf(tenant: InventoryTenant, index: number, context: TenantContext): PageDomain {
  const domain = tenant.domains[index] as InventoryTenant["domains"][number];
  const publishing = publishingOf(domain.dns ?? tenant.dns ?? "none");
  const holding = context.state?.holdings[tenant.key];
  const organizationId = holding?.organizationId;
  const overview = organizationId === undefined ? new Map() : context.facts.overviews.get(organizationId);
  const facts: DomainFacts | undefined = overview?.get(domain.name);
  const read = overview !== undefined;
  const deployed = context.state !== undefined;
  const observed = !read ? UNKNOWN : (facts?.policy ?? "not on service");
  const waiting = publishing.by === "none" && facts !== undefined && facts.verified === false;
  return {
    name: domain.name,
    publishing,
    published: publishing.by === "none" || !deployed ? false : context.shard?.failed ? UNKNOWN : true,
    verified: !read ? UNKNOWN : facts ? (facts.verified ?? UNKNOWN) : false,
    ...stageOf(tenant, domain.name, observed),
    observed,
    onService: !read ? UNKNOWN : facts !== undefined,
    spf: !read ? UNKNOWN : (facts?.spf ?? "no-record"),
    dkim: !read ? UNKNOWN : (facts?.dkim ?? "no-record"),
    dmarc: !read ? UNKNOWN : (facts?.dmarc ?? "no-record"),
    passRates: context.facts.passRates.get(domain.name) ?? emptySeries(context.facts.days.length),
    ...(waiting ? { waiting: waitingOf(domain.name, holding) } : {}),
  };
}

function attentionOf(tenant: Pick<PageTenant, "drift" | "domains">, shard: PageShard | undefined): AttentionReason[] {
  const reasons: AttentionReason[] = [];
  if (tenant.drift.length > 0) reasons.push("drifted");
  if (shard?.failed) reasons.push("shard failed");
  if (shard?.interrupted) reasons.push("shard interrupted");
  if (tenant.domains.some((domain) => domain.published === true && domain.dmarc === "no-record"))
    reasons.push("record not seen");
  return reasons;
}

function tenantOf(tenant: InventoryTenant, context: TenantContext, drift: DriftFound): PageTenant {
  const holding = context.state?.holdings[tenant.key];
  const organizationId = holding?.organizationId;
  const facts = {
    key: tenant.key,
    name: tenant.name,
    ...(context.state ? { shard: context.state.name } : {}),
    ...(organizationId ? { organizationId } : {}),
    plan: tenant.subscription === "none" ? "none" : (tenant.plan ?? "none"),
    subscription: tenant.subscription,
    subscriptionHeld: holding?.objects.some((object) => object.type === "Subscription") ?? false,
    deployed: context.state !== undefined,
    drift: driftLines(tenant.key, context.state, drift),
    domains: tenant.domains.map((_, index) => domainOf(tenant, index, context)),
  };
  return { ...facts, status: statusOf(facts, context.shard), attention: attentionOf(facts, context.shard) };
}

function totalsOf(tenants: readonly PageTenant[], shards: readonly PageShard[]): PageTotals {
  const domains = tenants.flatMap((tenant) => tenant.domains);
  const stages: Record<string, number> = {};
  for (const domain of domains) stages[domain.stage] = (stages[domain.stage] ?? 0) + 1;
  const unknownCell = (domain: PageDomain) =>
    [domain.verified, domain.observed, domain.dmarc, domain.published].includes(UNKNOWN) ||
    domain.passRates.unread.length > 0;
  return {
    tenants: tenants.length,
    domains: domains.length,
    verified: domains.filter((domain) => domain.verified === true).length,
    published: domains.filter((domain) => domain.published === true).length,
    drifted: tenants.filter((tenant) => tenant.attention.includes("drifted")).length,
    failedShards: shards.filter((shard) => shard.failed).length,
    needsAttention: tenants.filter((tenant) => tenant.attention.length > 0).length,
    waiting: tenants.filter((tenant) => tenant.status.word === "waiting for the customer's record").length,
    unknown: domains.filter(unknownCell).length,
    stages,
  };
}

/** The page's data: every tenant of the inventory, one row each, with its domains. */
export function fleetPage(inputs: PageInputs): FleetPage {
  const failures = shardFailures(inputs.states, inputs.lastRuns.up?.report);
  const shards: PageShard[] = [...inputs.states.values()]
    .map((state) => ({
      name: state.name,
      tenants: state.tenants.length,
      failed: failures.has(state.name),
      ...(failures.get(state.name) ? { failure: failures.get(state.name) } : {}),
      ...(state.interruption ? { interrupted: interruptionSummary(state.interruption) } : {}),
      ...(state.driftMark ? { drift: state.driftMark } : {}),
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
  const stateOf = new Map([...inputs.states.values()].flatMap((state) => state.tenants.map((key) => [key, state])));
  const shardOf = new Map(shards.map((shard) => [shard.name, shard]));
  const drift = lastDriftFound(inputs);
  const tenants = [...inputs.inventory.tenants]
    .sort((a, b) => a.key.localeCompare(b.key))
    .map((tenant) => {
      const state = stateOf.get(tenant.key);
      const context = { state, shard: state ? shardOf.get(state.name) : undefined, facts: inputs.facts };
      return tenantOf(tenant, context, drift);
    });
  const lastRuns = Object.fromEntries(Object.entries(inputs.lastRuns).map(([command, run]) => [command, run.at]));
  const totals = totalsOf(tenants, shards);
  return {
    formatVersion: FLEET_PAGE_FORMAT_VERSION,
    fleet: inputs.fleet,
    generatedAt: inputs.now.toISOString(),
    lastRuns,
    totals,
    shards,
    tenants,
    reads: { requests: inputs.requests, failures: inputs.facts.failures, days: inputs.facts.days },
    trend: [...(inputs.earlierRuns ?? []), { at: inputs.now.toISOString(), stages: totals.stages }],
  };
}
