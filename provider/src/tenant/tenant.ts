import * as pulumi from "@pulumi/pulumi";
import type { Plan } from "../api";
import { getPlans, selectPriceId } from "../functions/plans";
import { type DnsSetupRecord, Domain } from "../resources/domain";
import { DomainGroup } from "../resources/domainGroup";
import { DomainVerification } from "../resources/domainVerification";
import { Invitation } from "../resources/invitation";
import { Organization } from "../resources/organization";
import { Subscription, type SubscriptionStatus } from "../resources/subscription";
import { Webhook } from "../resources/webhook";
import { recordProgramFrames } from "../runtime/stackFrames";
import { pluginTypeToken } from "../runtime/typeToken";
import { checkTenantArgs } from "./args";
import {
  OutputOf,
  type PlannedObject,
  type PlannedType,
  PriceOf,
  type TenantDeclaration,
  type TenantPlan,
  TenantPlanError,
  tenantPlan,
} from "./plan";
import type { TenantIds } from "./schema";
import { recordAtStage } from "./staging";

export type { TenantPlan } from "./plan";
export type { TenantDomain, TenantIds, TenantOnDelete, TenantSubscription, TenantWebhook } from "./schema";

/** The Pulumi type of the component grouping one tenant's resources. */
export const TENANT_TYPE = pluginTypeToken("Tenant");
/** The component type of stacks made with the tenants-yaml example's own component: an alias, so they keep their resources. */
export const EXAMPLE_TENANT_TYPE = "dmarc-tenants:index:Tenant";

/** A problem with a tenant's declaration. A `pulumi.RunError`, so a preview stops with these lines and no stack trace. */
export class TenantError extends pulumi.RunError {
  constructor(readonly problems: readonly string[]) {
    super(problems.join("\n"));
  }
}

/**
 * Publishes a domain's setup record with the partner's DNS provider, in the
 * same `up`: given the record, its Domain and the domain's name, returns the
 * DNS resource (or nothing, for a domain published elsewhere), e.g.
 * `(record, domain, opts) => new cloudflare.DnsRecord(..., { name: record.name, content: record.value, ... }, opts)`.
 * Pass `opts` on: it carries `retainOnDelete` for a tenant with `onDelete: keep`.
 */
export type PublishRecord = (
  record: pulumi.Output<DnsSetupRecord>,
  domain: Domain,
  opts: pulumi.CustomResourceOptions,
  domainName: string,
) => pulumi.Resource | undefined;

/**
 * Declares what waits for the service to verify a published record: given the
 * Domain, the DNS resource `publishRecord` returned and the record published
 * (at its `policy`'s stage where the domain has one), returns that resource
 * (a `DomainVerification` with its default timeout unless given). Called for
 * the domains with `verify: true`.
 */
export type VerifyDomain = (
  domain: Domain,
  published: pulumi.Resource | undefined,
  opts: pulumi.CustomResourceOptions,
  record: pulumi.Output<DnsSetupRecord>,
) => pulumi.Resource;

/**
 * The default wait: a `DomainVerification` after the published record, given
 * that record's value (the staged one), so it waits again when a move of the
 * ramp or the service changes what is published.
 */
function waitForTheService(domainName: string): VerifyDomain {
  return (domain, _published, opts, record) =>
    new DomainVerification(
      `${domainName}/verification`,
      { domainId: domain.id, recordValue: record.apply((published) => published.value) },
      opts,
    );
}

/** What a Tenant declares ({@link TenantDeclaration}, in a program's inputs), and how it reaches the catalogue and DNS. */
export interface TenantArgs extends TenantDeclaration<pulumi.Input<string>> {
  /** The partner's plan catalogue; default `getPlans()`, fetched per tenant: pass one fetch to many tenants. */
  plans?: pulumi.Input<Plan[]>;
  publishRecord?: PublishRecord;
  verifyDomain?: VerifyDomain;
  /** How messages name the tenant, e.g. `tenants.yaml: tenant "Acme" (tenants[1])`; default `tenant "<key>"`. */
  label?: string;
}

export interface TenantDomainOutputs {
  domain: Domain;
  record: pulumi.Output<DnsSetupRecord>;
  published?: pulumi.Resource;
  verification?: pulumi.Resource;
}

/** The resource class of each planned type. */
const RESOURCE_CLASSES: Record<
  PlannedType,
  new (
    name: string,
    args: never,
    opts: pulumi.CustomResourceOptions,
  ) => pulumi.CustomResource
> = {
  Organization,
  DomainGroup,
  Subscription,
  Invitation,
  Webhook,
  Domain,
};

/** The tenant's plan, its problems as a `TenantError`. */
function planOf(key: string, args: TenantArgs, label: string): PlannedObject[] {
  try {
    return tenantPlan(key, args, label);
  } catch (error) {
    if (error instanceof TenantPlanError) throw new TenantError(error.problems);
    throw error;
  }
}

/** What registering a plan made: every resource by resource name, and the domains with their records. */
interface Registered {
  made: Map<string, pulumi.CustomResource>;
  domains: Record<string, TenantDomainOutputs>;
}

/** The output of an already registered resource that a planned input names. */
function outputOf(made: ReadonlyMap<string, pulumi.CustomResource>, reference: OutputOf): pulumi.Output<string> {
  const resource = made.get(reference.object) as unknown as Record<string, pulumi.Output<string>> | undefined;
  if (!resource) throw new Error(`the tenant plan names ${reference.object} before declaring it`);
  return resource[reference.output] as pulumi.Output<string>;
}

/** A Domain's record published by `publishRecord` and, with `verify`, the wait for its verification. */
function publishAndVerify(
  tenant: Tenant,
  domain: Domain,
  object: PlannedObject,
  args: TenantArgs,
): TenantDomainOutputs {
  const name = object.name;
  const policy = args.domains?.find((declared) => declared.name === name)?.policy;
  const where = `${args.label ?? `tenant "${tenant.key}"`}: domain ${name}`;
  const record = policy ? domain.setupRecord.apply((setup) => recordAtStage(setup, policy, where)) : domain.setupRecord;
  // A kept tenant keeps its records too: its organisation and domains stay on the service, and need them.
  const kept = object.retainOnDelete ? { retainOnDelete: true } : {};
  const published = args.publishRecord?.(record, domain, { parent: tenant, dependsOn: [domain], ...kept }, name);
  const verifyWith = args.verifyDomain ?? waitForTheService(name);
  const verification = object.verify
    ? verifyWith(domain, published, { parent: tenant, dependsOn: published ? [published] : [domain], ...kept }, record)
    : undefined;
  return { domain, record, ...(published ? { published } : {}), ...(verification ? { verification } : {}) };
}

/** Each planned object as a resource of the tenant, in the plan's order, its references resolved. */
function registerPlan(tenant: Tenant, plan: readonly PlannedObject[], args: TenantArgs, label: string): Registered {
  const made = new Map<string, pulumi.CustomResource>();
  const domains: Record<string, TenantDomainOutputs> = {};
  let catalogue: pulumi.Output<Plan[]> | undefined;
  const resolve = (value: unknown): unknown => {
    if (value instanceof OutputOf) return outputOf(made, value);
    if (!(value instanceof PriceOf)) return value;
    catalogue ??= pulumi.output(args.plans ?? getPlans());
    return catalogue.apply((plans) => priceIdFor(plans, value.plan, label));
  };
  for (const object of plan) {
    const inputs = Object.fromEntries(Object.entries(object.inputs).map(([input, value]) => [input, resolve(value)]));
    const dependsOn = object.dependsOn.flatMap((name) => made.get(name) ?? []);
    const options: pulumi.CustomResourceOptions = {
      parent: tenant,
      ...(object.retainOnDelete ? { retainOnDelete: true } : {}),
      ...(dependsOn.length > 0 ? { dependsOn } : {}),
    };
    const resource = new RESOURCE_CLASSES[object.type](object.name, inputs as never, options);
    made.set(object.name, resource);
    if (resource instanceof Domain) domains[object.name] = publishAndVerify(tenant, resource, object, args);
  }
  return { made, domains };
}

/** The registered resources of the plan's objects of one type, in its order. */
function madeOfType<Resource>(plan: readonly PlannedObject[], made: Registered["made"], type: PlannedType): Resource[] {
  return plan.filter((object) => object.type === type).map((object) => made.get(object.name) as Resource);
}

/** The registered resources of one part of the plan, by the part's name (e-mail address, webhook name). */
function byPart<Resource>(
  plan: readonly PlannedObject[],
  made: Registered["made"],
  kind: "admin" | "webhook",
): Record<string, Resource> {
  return Object.fromEntries(
    plan.flatMap((object) =>
      object.part.kind === kind ? [[object.part.name, made.get(object.name) as Resource]] : [],
    ),
  );
}

/**
 * One customer of the partner: its organisation with domain groups,
 * subscription, admin invitations, webhooks and domains, declared as its
 * plan (`tenantPlan`) says. Resource names are the tenant's key followed by
 * what the resource is (`acme-corp/group`, `acme-corp/admin/alice@acme.example`);
 * a domain is named after itself.
 */
export class Tenant extends pulumi.ComponentResource {
  readonly key: string;
  readonly organization: Organization;
  readonly group: DomainGroup;
  /** The further groups (`groups`), by name. */
  readonly groups: Record<string, DomainGroup>;
  /** Absent with `subscription: "none"`. */
  readonly subscription: Subscription | undefined;
  /** By domain name. */
  readonly domains: Record<string, TenantDomainOutputs>;
  /** By e-mail address. */
  readonly invitations: Record<string, Invitation>;
  /** By webhook name. */
  readonly webhooks: Record<string, Webhook>;
  readonly organizationId: pulumi.Output<string>;
  /** The subscription's status; `none` when the tenant declares no subscription. */
  readonly subscriptionStatus: pulumi.Output<SubscriptionStatus | "none">;
  /** By domain name: the record to publish, at its `policy`'s stage where the domain has one. */
  readonly records: pulumi.Output<Record<string, DnsSetupRecord>>;
  /** By webhook name: the signing secret (a Pulumi secret; empty for an adopted webhook until its secret is rotated). */
  readonly webhookSecrets: pulumi.Output<Record<string, string>>;
  /** The id of every object, in the shape of `existingIds`: what a fleet adopts when the tenant moves in. */
  readonly ids: pulumi.Output<TenantIds>;

  /** @param key stem of every resource name; lower-case words joined by hyphens, no `/`. Keep it across renames. */
  constructor(key: string, args: TenantArgs, opts?: pulumi.ComponentResourceOptions) {
    const restoreStackTrace = recordProgramFrames();
    try {
      super(TENANT_TYPE, key, {}, { ...opts, aliases: [...(opts?.aliases ?? []), { type: EXAMPLE_TENANT_TYPE }] });
    } finally {
      restoreStackTrace();
    }
    this.key = key;
    // A label of the wrong type is refused below, named by the default one.
    const label = typeof args.label === "string" ? args.label : `tenant "${key}"`;
    checkTenantArgs(
      args,
      label,
      (problems) => new TenantError(problems),
      (problems) => pulumi.log.error(problems.join("\n"), this),
    );
    const plan = planOf(key, args, label);
    const { made, domains } = registerPlan(this, plan, args, label);
    const [group, ...groups] = madeOfType<DomainGroup>(plan, made, "DomainGroup");
    this.organization = made.get(key) as Organization;
    this.organizationId = this.organization.organizationId;
    this.group = group as DomainGroup;
    this.groups = Object.fromEntries((args.groups ?? []).map((name, index) => [name, groups[index] as DomainGroup]));
    [this.subscription] = madeOfType<Subscription>(plan, made, "Subscription");
    this.subscriptionStatus = this.subscription?.status ?? pulumi.output("none" as const);
    this.invitations = byPart<Invitation>(plan, made, "admin");
    this.webhooks = byPart<Webhook>(plan, made, "webhook");
    this.domains = domains;
    this.records = pulumi.output(
      Object.fromEntries(Object.entries(this.domains).map(([domain, outputs]) => [domain, outputs.record])),
    );
    this.webhookSecrets = pulumi.secret(
      Object.fromEntries(Object.entries(this.webhooks).map(([hook, webhook]) => [hook, webhook.secret])),
    );
    this.ids = idsOf(this);
    // The properties above are the component's outputs for programs. Recorded again as the
    // component's state they would repeat what its resources hold, in a checkpoint the engine
    // rewrites after every step; a fleet's shard exports them once.
    this.registerOutputs({});
  }
}

/** The price of the tenant's plan, or an error naming the tenant and its `plan`. */
export function priceIdFor(plans: readonly Plan[], plan: TenantPlan, label: string): string {
  const { name, ...price } = plan;
  try {
    return selectPriceId(plans, { plan: name, ...price });
  } catch (error) {
    throw new TenantError([`${label} plan: ${(error as Error).message}`]);
  }
}

function idsOf(tenant: Tenant): pulumi.Output<TenantIds> {
  const byName = (resources: Record<string, pulumi.CustomResource>) =>
    Object.fromEntries(Object.entries(resources).map(([name, resource]) => [name, resource.id]));
  return pulumi.output({
    organization: tenant.organization.id,
    group: tenant.group.id,
    ...(Object.keys(tenant.groups).length > 0 ? { groups: byName(tenant.groups) } : {}),
    ...(tenant.subscription ? { subscription: tenant.subscription.id } : {}),
    domains: byName(Object.fromEntries(Object.entries(tenant.domains).map(([name, entry]) => [name, entry.domain]))),
    admins: byName(tenant.invitations),
    webhooks: byName(tenant.webhooks),
  });
}
