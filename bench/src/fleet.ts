import type { PulumiFn } from "@pulumi/pulumi/automation";
import * as dmarc from "pulumi-dmarc-partner";
import type { Plan } from "pulumi-dmarc-partner/api";
import type { DmarcClient } from "pulumi-dmarc-partner/client";

// The generated fleet, twice over: as the Pulumi program the engine deploys,
// and as the graph of resource operations the baseline runs without Pulumi,
// through the same resource definitions and client. The graph also gives
// the latency bound, so all three describe one workload.

export interface FleetSpec {
  tenants: number;
  domainsPerTenant: number;
  /** The catalogue plan every tenant subscribes to: the smallest whose domain limit fits a tenant's domains. */
  plan: string;
  /**
   * Domains wait for the subscription when a tenant has more of them than an
   * organisation without a plan may hold (the smallest plan's limit).
   */
  domainsWaitForSubscription: boolean;
}

/** The names of one generated tenant's objects: what the program declares and the baseline creates. */
export interface GeneratedTenant {
  key: string;
  orgName: string;
  groupName: string;
  webhookName: string;
  webhookUrl: string;
  domains: string[];
}

/** Resources per tenant besides its domains: organisation, domain group, webhook, subscription. */
const FIXED_RESOURCES = 4;

export function resourceCount(spec: FleetSpec): number {
  return spec.tenants * (FIXED_RESOURCES + spec.domainsPerTenant);
}

/** Picks the plan for `domainsPerTenant` from the partner's catalogue, or says why none fits. */
export function fleetSpec(plans: readonly Plan[], tenants: number, domainsPerTenant: number): FleetSpec {
  // A plan that states no domain limit has none the bench can run into.
  const domainsOf = (plan: Plan) => plan.features.domainCount ?? Number.POSITIVE_INFINITY;
  const bySize = [...plans].sort((a, b) => domainsOf(a) - domainsOf(b));
  const fitting = bySize.find((plan) => domainsOf(plan) >= domainsPerTenant);
  if (!fitting) {
    const largest = bySize.at(-1);
    throw new Error(
      `no plan holds ${domainsPerTenant} domains per tenant (the largest, ${largest?.name ?? "none"}, holds ${largest?.features.domainCount ?? 0})`,
    );
  }
  const allowanceWithoutPlan = bySize[0]?.features.domainCount ?? 0;
  return {
    tenants,
    domainsPerTenant,
    plan: fitting.name,
    domainsWaitForSubscription: domainsPerTenant > allowanceWithoutPlan,
  };
}

export function tenantsOf(spec: FleetSpec): GeneratedTenant[] {
  const width = String(spec.tenants).length;
  return Array.from({ length: spec.tenants }, (_, index) => {
    const key = `t${String(index + 1).padStart(width, "0")}`;
    return {
      key,
      orgName: `Bench tenant ${key}`,
      groupName: `${key} main`,
      webhookName: `${key} events`,
      // Loopback, and subscribed to an event the bench never causes: no delivery is ever attempted.
      webhookUrl: `http://127.0.0.1:9/bench/${key}`,
      domains: Array.from({ length: spec.domainsPerTenant }, (_, d) => `d${d + 1}.${key}.bench.example`),
    };
  });
}

const WEBHOOK_EVENTS: ("domain.created" | "domain.verified" | "report.received")[] = ["domain.verified"];

/** The fleet as a partner would write it, one catalogue read shared by every subscription. */
export function fleetProgram(spec: FleetSpec): PulumiFn {
  return async () => {
    const priceId = dmarc.getPlans().then((plans) => dmarc.selectPriceId(plans, { plan: spec.plan }));
    for (const tenant of tenantsOf(spec)) {
      const org = new dmarc.Organization(`${tenant.key}-org`, { name: tenant.orgName });
      const organizationId = org.organizationId;
      const group = new dmarc.DomainGroup(`${tenant.key}-group`, { organizationId, name: tenant.groupName });
      // The organisation as owner: the emulator allows five webhooks per owner, the partner id would run out.
      new dmarc.Webhook(`${tenant.key}-hook`, {
        name: tenant.webhookName,
        url: tenant.webhookUrl,
        events: WEBHOOK_EVENTS,
        ownerId: organizationId,
      });
      const subscription = new dmarc.Subscription(`${tenant.key}-plan`, { organizationId, priceId });
      tenant.domains.forEach((domain, index) => {
        new dmarc.Domain(
          `${tenant.key}-d${index + 1}`,
          {
            organizationId,
            domain,
            type: "sending",
            groupId: group.groupId,
            declaredTogether: tenant.domains.length,
          },
          spec.domainsWaitForSubscription ? { dependsOn: [subscription] } : undefined,
        );
      });
    }
    return {};
  };
}

export type Phase = "up" | "preview" | "refresh" | "destroy";
export const PHASES: readonly Phase[] = ["up", "preview", "refresh", "destroy"];

/** One resource operation, run once the operations in `after` are done. */
export interface Operation {
  key: string;
  after: readonly string[];
  run(client: DmarcClient): Promise<void>;
}

type Props = Record<string, unknown>;

const { organization, domainGroup, domain, webhook, subscription } = dmarc.resourceDefinitions;

/** Ids and properties the baseline's up hands to its refresh and destroy, as the state does for Pulumi. */
export class FleetState {
  private readonly resources = new Map<string, { id: string; props: Props }>();
  priceId: string | undefined;

  record(key: string, id: string, props: Props): void {
    this.resources.set(key, { id, props });
  }

  get(key: string): { id: string; props: Props } {
    const found = this.resources.get(key);
    if (!found) throw new Error(`the baseline has no ${key}: run its up first`);
    return found;
  }
}

/** A resource's operation in a phase: create from its inputs, read back or delete what the state recorded. */
function resourceOperation(
  phase: "up" | "refresh" | "destroy",
  state: FleetState,
  key: string,
  after: readonly string[],
  definition: dmarc.AnyResourceDefinition,
  inputs: () => Props,
): Operation {
  const run = {
    up: async (client: DmarcClient) => {
      const created = await definition.create(dmarc.lifecycleContext(client), definition.inputs.parse(inputs()));
      state.record(key, created.id, created.outs);
    },
    refresh: async (client: DmarcClient) => {
      const { id, props } = state.get(key);
      const found = await definition.read(dmarc.lifecycleContext(client), id, props);
      if (!found) throw new Error(`${definition.typeName} ${id} is gone`);
      state.record(key, id, found);
    },
    destroy: async (client: DmarcClient) => {
      const { id, props } = state.get(key);
      await definition.delete(dmarc.lifecycleContext(client), id, props);
    },
  }[phase];
  return { key, after, run };
}

const PLANS = "plans";

/**
 * The operations of one phase: the resource definitions' own lifecycle
 * functions (provider/src/resources/*.ts), with the engine's ordering:
 * creates after their dependencies, deletes before them, reads in any order.
 */
export function operations(phase: Phase, spec: FleetSpec, state: FleetState): Operation[] {
  const ops: Operation[] = [];
  if (phase === "up" || phase === "preview") {
    // The program's catalogue read; a no-change preview makes no other call.
    ops.push({
      key: PLANS,
      after: [],
      run: async (client) => {
        state.priceId = dmarc.selectPriceId(await client.listPlans(), { plan: spec.plan });
      },
    });
  }
  if (phase === "preview") return ops;
  for (const tenant of tenantsOf(spec)) {
    const org = `${tenant.key}/org`;
    const group = `${tenant.key}/group`;
    const hook = `${tenant.key}/hook`;
    const plan = `${tenant.key}/plan`;
    const domainKeys = tenant.domains.map((name) => `${tenant.key}/${name}`);
    const organizationId = () => state.get(org).id;
    // A DomainGroup's resource id is `<organizationId>/<groupId>`.
    const groupId = () => state.get(group).id.split("/")[1];
    const priceId = () => {
      if (state.priceId === undefined) throw new Error("the baseline has no price id: run its up first");
      return state.priceId;
    };
    const domainsAfter = spec.domainsWaitForSubscription ? [org, group, plan] : [org, group];
    const order: Record<typeof phase, Record<string, readonly string[]>> = {
      up: { [org]: [], [group]: [org], [hook]: [org], [plan]: [org, PLANS], domain: domainsAfter },
      refresh: { [org]: [], [group]: [], [hook]: [], [plan]: [], domain: [] },
      destroy: {
        [org]: [group, hook, plan, ...domainKeys],
        [group]: domainKeys,
        [hook]: [],
        [plan]: spec.domainsWaitForSubscription ? domainKeys : [],
        domain: [],
      },
    };
    const after = order[phase];
    const operation = (
      key: string,
      waits: readonly string[] | undefined,
      definition: dmarc.AnyResourceDefinition,
      inputs: () => Props,
    ) => resourceOperation(phase, state, key, waits ?? [], definition, inputs);
    ops.push(
      operation(org, after[org], organization, () => ({ name: tenant.orgName })),
      operation(group, after[group], domainGroup, () => ({ organizationId: organizationId(), name: tenant.groupName })),
      // The organisation as owner: the emulator allows five webhooks per owner, the partner id would run out.
      operation(hook, after[hook], webhook, () => ({
        name: tenant.webhookName,
        url: tenant.webhookUrl,
        events: WEBHOOK_EVENTS,
        ownerId: organizationId(),
      })),
      operation(plan, after[plan], subscription, () => ({ organizationId: organizationId(), priceId: priceId() })),
      ...tenant.domains.map((name, index) =>
        operation(domainKeys[index] as string, after.domain, domain, () => ({
          organizationId: organizationId(),
          domain: name,
          type: "sending",
          groupId: groupId(),
        })),
      ),
    );
  }
  return ops;
}

export interface Bounds {
  /** Requests the phase sent, as the emulator counted them. */
  requests: number;
  /**
   * Round trips on the longest chain of operations that wait for one another,
   * the token included: one per operation, a lower bound (a domain's create
   * also reads its setup record).
   */
  depth: number;
  /** What the service allows at best: latency x depth, and requests / rate when rate-limited. */
  boundSeconds: number;
  /** The bound once our concurrency caps requests in flight: total latency / min(--parallel, maxConcurrency). */
  floorSeconds: number;
}

export function boundsOf(
  ops: readonly Operation[],
  requests: number,
  settings: { latencyMs: number; rateLimit: number | undefined; concurrency: number },
): Bounds {
  const byKey = new Map(ops.map((op) => [op.key, op]));
  const chain = new Map<string, number>();
  // Memoized longest path; the graphs are acyclic by construction, so the recursion ends.
  const longest = (key: string): number => {
    const cached = chain.get(key);
    if (cached !== undefined) return cached;
    const op = byKey.get(key);
    if (!op) throw new Error(`operation ${key} waits for an unknown operation`);
    const value = 1 + Math.max(0, ...op.after.map(longest));
    chain.set(key, value);
    return value;
  };
  const depth = 1 + Math.max(0, ...ops.map((op) => longest(op.key)));
  const latency = settings.latencyMs / 1000;
  const boundSeconds = Math.max(depth * latency, settings.rateLimit ? requests / settings.rateLimit : 0);
  return {
    requests,
    depth,
    boundSeconds,
    floorSeconds: Math.max(boundSeconds, (requests * latency) / settings.concurrency),
  };
}
