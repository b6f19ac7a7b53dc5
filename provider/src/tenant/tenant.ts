import * as pulumi from "@pulumi/pulumi";
import type { Plan } from "../api";
import { getPlans, type PriceSelector, selectPriceId } from "../functions/plans";
import { type DnsSetupRecord, Domain } from "../resources/domain";
import { DomainGroup } from "../resources/domainGroup";
import { DomainVerification } from "../resources/domainVerification";
import { Invitation } from "../resources/invitation";
import { Organization } from "../resources/organization";
import { Subscription, type SubscriptionStatus } from "../resources/subscription";
import { Webhook } from "../resources/webhook";
import { recordProgramFrames } from "../runtime/stackFrames";
import { repeats } from "../runtime/values";
import {
  TENANT_KEY_RULE,
  type TenantDomain,
  type TenantIds,
  TenantKey,
  type TenantOnDelete,
  type TenantWebhook,
} from "./schema";

export type { TenantDomain, TenantIds, TenantOnDelete, TenantWebhook } from "./schema";

/** The Pulumi type of the component grouping one tenant's resources. */
export const TENANT_TYPE = "dmarc:index:Tenant";
/** The component type of stacks made with the tenants-yaml example's own component: an alias, so they keep their resources. */
export const EXAMPLE_TENANT_TYPE = "dmarc-tenants:index:Tenant";

/** A problem with a tenant's declaration. A `pulumi.RunError`, so a preview stops with these lines and no stack trace. */
export class TenantError extends pulumi.RunError {
  constructor(readonly problems: readonly string[]) {
    super(problems.join("\n"));
  }
}

/** The tenant's plan: a price selector whose plan is given by `name`. */
export interface TenantPlan extends Omit<PriceSelector, "plan"> {
  /** Plan name of the partner's catalogue, matched without regard to case, e.g. `Business`. */
  name: PriceSelector["plan"];
}

/**
 * Publishes a domain's setup record with the partner's DNS provider, in the
 * same `up`: given the record, its Domain and the domain's name, returns the
 * DNS resource (or nothing, for a domain published elsewhere), e.g.
 * `(record, domain, opts) => new cloudflare.DnsRecord(..., { name: record.name, content: record.value, ... }, opts)`.
 */
export type PublishRecord = (
  record: pulumi.Output<DnsSetupRecord>,
  domain: Domain,
  opts: pulumi.CustomResourceOptions,
  domainName: string,
) => pulumi.Resource | undefined;

/**
 * Declares what waits for the service to verify a published record: given the
 * Domain and the DNS resource `publishRecord` returned, returns that resource
 * (a `DomainVerification` with its default timeout unless given). Called for
 * the domains with `verify: true`.
 */
export type VerifyDomain = (
  domain: Domain,
  published: pulumi.Resource | undefined,
  opts: pulumi.CustomResourceOptions,
) => pulumi.Resource;

/**
 * The default wait: a `DomainVerification` after the published record, which
 * waits again when the record's value changes.
 */
function waitForTheService(domainName: string): VerifyDomain {
  return (domain, _published, opts) =>
    new DomainVerification(
      `${domainName}/verification`,
      { domainId: domain.id, recordValue: domain.setupRecord.apply((record) => record.value) },
      opts,
    );
}

export interface TenantArgs {
  /** The organisation's name. Renaming updates the organisation in place: the resource name (the key) stays. */
  name: pulumi.Input<string>;
  /** Name of the tenant's domain group. */
  group: pulumi.Input<string>;
  /** Plan and frequency, resolved against the catalogue (`plans`). */
  plan: TenantPlan;
  domains?: TenantDomain[];
  /** E-mail addresses invited as administrators. */
  admins?: string[];
  /** Webhooks owned by the organisation: they receive its events only and go when it goes. */
  webhooks?: TenantWebhook[];
  /** `delete` (default), `cancelSubscriptions` (the organisation and its data stay) or `keep` (nothing on the service is touched). */
  onDelete?: TenantOnDelete;
  /** Existing objects to adopt instead of creating. */
  existingIds?: TenantIds;
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

/** What every resource of one tenant is declared with: its name, its options, and the id it adopts. */
interface TenantScope {
  key: string;
  /** The resource name of a part of the tenant: `<key>/<part>/...`. */
  name(...parts: string[]): string;
  /** The component as parent; with `onDelete: keep`, every resource retained. */
  options: pulumi.CustomResourceOptions;
  /** The `importId` input adopting the object with this id, if one is given. */
  adopt(id: string | undefined): { importId?: string };
}

function scopeOf(tenant: Tenant, key: string, onDelete: TenantOnDelete): TenantScope {
  return {
    key,
    name: (...parts) => [key, ...parts].join("/"),
    // Kept tenants are only forgotten: every resource retained, the organisation's delete never runs.
    options: { parent: tenant, ...(onDelete === "keep" ? { retainOnDelete: true } : {}) },
    adopt: (id) => (id === undefined ? {} : { importId: id }),
  };
}

/**
 * One customer of the partner: its organisation with domain group,
 * subscription, admin invitations, webhooks and domains. Resource names are
 * the tenant's key followed by what the resource is (`acme-corp/group`,
 * `acme-corp/admin/alice@acme.example`); a domain is named after itself.
 */
export class Tenant extends pulumi.ComponentResource {
  readonly key: string;
  readonly organization: Organization;
  readonly group: DomainGroup;
  readonly subscription: Subscription;
  /** By domain name. */
  readonly domains: Record<string, TenantDomainOutputs>;
  /** By e-mail address. */
  readonly invitations: Record<string, Invitation>;
  /** By webhook name. */
  readonly webhooks: Record<string, Webhook>;
  readonly organizationId: pulumi.Output<string>;
  readonly subscriptionStatus: pulumi.Output<SubscriptionStatus>;
  /** By domain name: the record to publish. */
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
    const label = args.label ?? `tenant "${key}"`;
    checkArgs(key, args, label);
    const existing = args.existingIds ?? {};
    const onDelete = args.onDelete ?? "delete";
    const scope = scopeOf(this, key, onDelete);

    this.organization = declareOrganization(scope, args.name, onDelete, existing.organization);
    this.organizationId = this.organization.organizationId;
    this.group = new DomainGroup(
      scope.name("group"),
      { organizationId: this.organizationId, name: args.group, ...scope.adopt(existing.group) },
      scope.options,
    );
    const priceId = pulumi.output(args.plans ?? getPlans()).apply((plans) => priceIdFor(plans, args.plan, label));
    this.subscription = new Subscription(
      scope.name("subscription"),
      { organizationId: this.organizationId, priceId, ...scope.adopt(existing.subscription) },
      scope.options,
    );
    this.subscriptionStatus = this.subscription.status;
    this.invitations = declareInvitations(scope, this.organizationId, args.admins ?? [], existing.admins ?? {});
    this.webhooks = declareWebhooks(scope, this.organizationId, args.webhooks ?? [], existing.webhooks ?? {});
    // After the subscription, so the plan's domain limit applies rather than the trial's; after the
    // webhooks, so they see each domain's domain.created event.
    const before = [this.subscription, ...Object.values(this.webhooks)];
    this.domains = Object.fromEntries(
      (args.domains ?? []).map((entry) => [entry.name, this.declareDomain(scope, entry, args, existing, before)]),
    );
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

  /** A Domain, its record published by `publishRecord` and, with `verify`, the wait for its verification. */
  private declareDomain(
    scope: TenantScope,
    entry: TenantDomain,
    args: TenantArgs,
    existing: TenantIds,
    before: pulumi.Resource[],
  ): TenantDomainOutputs {
    const { name, verify, ...settings } = entry;
    const domain = new Domain(
      name,
      {
        organizationId: this.organizationId,
        domain: name,
        groupId: this.group.groupId,
        ...settings,
        ...scope.adopt(existing.domains?.[name]),
      },
      { ...scope.options, dependsOn: before },
    );
    const record = domain.setupRecord;
    const published = args.publishRecord?.(record, domain, { parent: this, dependsOn: [domain] }, name);
    const verifyWith = args.verifyDomain ?? waitForTheService(name);
    const verification = verify
      ? verifyWith(domain, published, { parent: this, dependsOn: published ? [published] : [domain] })
      : undefined;
    return { domain, record, ...(published ? { published } : {}), ...(verification ? { verification } : {}) };
  }
}

/** The tenant's organisation: `keep` and `cancelSubscriptions` both leave it on the service. */
function declareOrganization(
  scope: TenantScope,
  name: pulumi.Input<string>,
  onDelete: TenantOnDelete,
  existingId: string | undefined,
): Organization {
  return new Organization(
    scope.key,
    { name, onDelete: onDelete === "delete" ? "delete" : "cancelSubscriptions", ...scope.adopt(existingId) },
    scope.options,
  );
}

/** An administrator invitation per e-mail address, by address. */
function declareInvitations(
  scope: TenantScope,
  organizationId: pulumi.Output<string>,
  admins: readonly string[],
  existing: Record<string, string>,
): Record<string, Invitation> {
  return Object.fromEntries(
    admins.map((email) => [
      email,
      new Invitation(
        scope.name("admin", email),
        { organizationId, email, role: "admin", ...scope.adopt(existing[email]) },
        scope.options,
      ),
    ]),
  );
}

/** The tenant's webhooks, owned by its organisation, by name. */
function declareWebhooks(
  scope: TenantScope,
  organizationId: pulumi.Output<string>,
  webhooks: readonly TenantWebhook[],
  existing: Record<string, string>,
): Record<string, Webhook> {
  return Object.fromEntries(
    webhooks.map((webhook) => [
      webhook.name,
      new Webhook(
        scope.name("webhook", webhook.name),
        { ...webhook, ownerId: organizationId, ...scope.adopt(existing[webhook.name]) },
        scope.options,
      ),
    ]),
  );
}

/** Declarations the resources' own checks cannot see: names that would collide. */
function checkArgs(key: string, args: TenantArgs, label: string): void {
  const problems: string[] = [];
  if (!TenantKey.safeParse(key).success) problems.push(`${label}: key "${key}" ${TENANT_KEY_RULE}`);
  const listedOnce = (values: readonly string[], field: string) => {
    for (const { position } of repeats(values))
      problems.push(`${label}: ${field}[${position}] "${values[position]}" is listed already`);
  };
  listedOnce(
    (args.domains ?? []).map((domain) => domain.name),
    "domains",
  );
  listedOnce(args.admins ?? [], "admins");
  listedOnce(
    (args.webhooks ?? []).map((webhook) => webhook.name),
    "webhooks",
  );
  if (problems.length > 0) throw new TenantError(problems);
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
    subscription: tenant.subscription.id,
    domains: byName(Object.fromEntries(Object.entries(tenant.domains).map(([name, entry]) => [name, entry.domain]))),
    admins: byName(tenant.invitations),
    webhooks: byName(tenant.webhooks),
  });
}
