import type { PulumiFn } from "@pulumi/pulumi/automation";
import * as dmarc from "pulumi-dmarc-partner";
import type { Plan } from "pulumi-dmarc-partner/api";
import type { DmarcClient } from "pulumi-dmarc-partner/client";

// The generated fleet, twice over: as the Pulumi program the engine deploys,
// and as the graph of the same API calls the baseline makes without Pulumi.
// The graph also gives the lower bounds, so all three describe one workload.

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

export interface Tenant {
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
  const bySize = [...plans].sort((a, b) => a.features.domainCount - b.features.domainCount);
  const fitting = bySize.find((plan) => plan.features.domainCount >= domainsPerTenant);
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

export function tenantsOf(spec: FleetSpec): Tenant[] {
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
          { organizationId, domain, type: "sending", groupId: group.groupId },
          spec.domainsWaitForSubscription ? { dependsOn: [subscription] } : undefined,
        );
      });
    }
    return {};
  };
}

export type Phase = "up" | "preview" | "refresh" | "destroy";
export const PHASES: readonly Phase[] = ["up", "preview", "refresh", "destroy"];

/** One resource operation: the API calls the provider makes for it, in order, once `after` are done. */
export interface Operation {
  key: string;
  after: readonly string[];
  /** Requests sent one after the other. */
  requests: number;
  run(client: DmarcClient): Promise<void>;
}

interface TenantIds {
  organizationId?: string;
  groupId?: string;
  webhookId?: string;
  subscriptionId?: string;
}

/** Ids the baseline's up hands to its refresh and destroy, as the state does for Pulumi. */
export class FleetIds {
  private readonly byTenant = new Map<string, TenantIds>();
  priceId: string | undefined;

  of(tenant: Tenant): TenantIds {
    let ids = this.byTenant.get(tenant.key);
    if (!ids) {
      ids = {};
      this.byTenant.set(tenant.key, ids);
    }
    return ids;
  }
}

function known(value: string | undefined, what: string): string {
  if (value === undefined) throw new Error(`the baseline has no ${what}: run its up first`);
  return value;
}

const PLANS = "plans";

/**
 * The calls of one phase, mirroring what the provider's resources do
 * (provider/src/resources/*.ts), with the engine's ordering: creates after
 * their dependencies, deletes before them, reads in any order.
 */
export function operations(phase: Phase, spec: FleetSpec, ids: FleetIds): Operation[] {
  const ops: Operation[] = [];
  if (phase === "up" || phase === "preview") {
    // The program's catalogue read; a no-change preview makes no other call.
    ops.push({
      key: PLANS,
      after: [],
      requests: 1,
      run: async (client) => {
        ids.priceId = dmarc.selectPriceId(await client.listPlans(), { plan: spec.plan });
      },
    });
  }
  if (phase === "preview") return ops;
  for (const tenant of tenantsOf(spec)) {
    const t = ids.of(tenant);
    const org = `${tenant.key}/org`;
    const group = `${tenant.key}/group`;
    const hook = `${tenant.key}/hook`;
    const plan = `${tenant.key}/plan`;
    const domainKeys = tenant.domains.map((domain) => `${tenant.key}/${domain}`);
    const orgId = () => known(t.organizationId, `organisation of ${tenant.key}`);
    if (phase === "up") {
      ops.push(
        {
          key: org,
          after: [],
          requests: 1,
          run: async (client) => {
            t.organizationId = (await client.createOrganization({ name: tenant.orgName })).id;
          },
        },
        {
          key: group,
          after: [org],
          requests: 1,
          run: async (client) => {
            t.groupId = (await client.createDomainGroup({ organizationId: orgId(), name: tenant.groupName })).id;
          },
        },
        {
          key: hook,
          after: [org],
          requests: 1,
          run: async (client) => {
            const created = await client.createWebhook({
              name: tenant.webhookName,
              url: tenant.webhookUrl,
              events: WEBHOOK_EVENTS,
              active: true,
              ownerId: orgId(),
            });
            t.webhookId = created.objectId;
          },
        },
        {
          key: plan,
          after: [org, PLANS],
          requests: 1,
          run: async (client) => {
            const priceId = known(ids.priceId, "price id");
            t.subscriptionId = (await client.assignSubscription({ organizationId: orgId(), priceId })).id;
          },
        },
        ...tenant.domains.map((domain, index) => ({
          key: domainKeys[index] as string,
          after: spec.domainsWaitForSubscription ? [org, group, plan] : [org, group],
          requests: 2,
          run: async (client: DmarcClient) => {
            const groupId = known(t.groupId, `domain group of ${tenant.key}`);
            await client.createDomain({ organizationId: orgId(), domain, type: "sending", groupId });
            await client.getSetupRecord(orgId(), domain, "TXT");
          },
        })),
      );
    } else if (phase === "refresh") {
      ops.push(
        { key: org, after: [], requests: 1, run: async (client) => void (await client.getOrganization(orgId())) },
        {
          key: group,
          after: [],
          requests: 1,
          run: async (client) => void (await client.getDomainGroup(orgId(), known(t.groupId, "group"))),
        },
        {
          key: hook,
          after: [],
          requests: 1,
          run: async (client) => void (await client.getWebhook(known(t.webhookId, "webhook"))),
        },
        { key: plan, after: [], requests: 1, run: async (client) => void (await client.listSubscriptions(orgId())) },
        ...tenant.domains.map((domain, index) => ({
          key: domainKeys[index] as string,
          after: [],
          requests: 2,
          run: async (client: DmarcClient) => {
            await client.getDomain(orgId(), domain);
            await client.getSetupRecord(orgId(), domain, "TXT");
          },
        })),
      );
    } else {
      ops.push(
        ...tenant.domains.map((domain, index) => ({
          key: domainKeys[index] as string,
          after: [],
          requests: 1,
          run: async (client: DmarcClient) => void (await client.deleteDomain(orgId(), domain)),
        })),
        {
          key: plan,
          after: spec.domainsWaitForSubscription ? domainKeys : [],
          requests: 2,
          run: async (client) => {
            const subscriptionId = known(t.subscriptionId, "subscription");
            const found = (await client.listSubscriptions(orgId())).find((s) => s.id === subscriptionId);
            if (found && found.cancelledAt === null) await client.cancelSubscription(found.id);
          },
        },
        {
          key: hook,
          after: [],
          requests: 1,
          run: async (client) => void (await client.deleteWebhook(known(t.webhookId, "webhook"))),
        },
        {
          key: group,
          after: domainKeys,
          requests: 1,
          run: async (client) => void (await client.deleteDomainGroup(orgId(), known(t.groupId, "group"))),
        },
        {
          key: org,
          after: [group, hook, plan, ...domainKeys],
          requests: 2,
          run: async (client) => {
            for (const subscription of await client.listSubscriptions(orgId())) {
              if (subscription.cancelledAt === null) await client.cancelSubscription(subscription.id);
            }
            await client.deleteOrganization(orgId());
          },
        },
      );
    }
  }
  return ops;
}

export interface Bounds {
  /** Requests the phase needs at least: every call of the graph plus one token. */
  requests: number;
  /** Requests on the longest chain of calls that wait for one another, the token included. */
  depth: number;
  /** What the service allows at best: latency x depth, and requests / rate when rate-limited. */
  boundSeconds: number;
  /** The bound once our concurrency caps requests in flight: total latency / min(--parallel, maxConcurrency). */
  floorSeconds: number;
}

export function boundsOf(
  ops: readonly Operation[],
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
    const value = op.requests + Math.max(0, ...op.after.map(longest));
    chain.set(key, value);
    return value;
  };
  const calls = ops.reduce((sum, op) => sum + op.requests, 0);
  const requests = calls + 1;
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
