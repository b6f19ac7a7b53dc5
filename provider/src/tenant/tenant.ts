import * as pulumi from "@pulumi/pulumi";
import type { EventName, Plan } from "../api";
import { type BillingFrequency, getPlans, selectPriceId } from "../functions/plans";
import { type DnsSetupRecord, Domain } from "../resources/domain";
import { DomainGroup } from "../resources/domainGroup";
import { DomainVerification } from "../resources/domainVerification";
import { Invitation } from "../resources/invitation";
import { Organization } from "../resources/organization";
import { Subscription, type SubscriptionStatus } from "../resources/subscription";
import { Webhook } from "../resources/webhook";
import { recordProgramFrames } from "../runtime/stackFrames";

/** The Pulumi type of the component grouping one tenant's resources. */
export const TENANT_TYPE = "dmarc:index:Tenant";
/** The type the tenants-yaml example used before the component moved into the package; aliased so its stacks keep their resources. */
export const EXAMPLE_TENANT_TYPE = "dmarc-tenants:index:Tenant";

/** A problem with a tenant's declaration. A `pulumi.RunError`, so a preview stops with these lines and no stack trace. */
export class TenantError extends pulumi.RunError {
  constructor(readonly problems: readonly string[]) {
    super(problems.join("\n"));
  }
}

export interface TenantPlan {
  /** Plan name of the partner's catalogue, matched without regard to case, e.g. `Business`. */
  name: string;
  /** Billing frequency; default `monthly`. */
  frequency?: BillingFrequency;
  /** Needed only when the plan has several prices for the frequency. */
  currency?: string;
}

export interface TenantDomain {
  /** Domain name, lower case. Also the resource name, so it is unique in a stack. */
  name: string;
  /** `sending` (default) or `parked`. */
  type?: "sending" | "parked";
  /** `TXT` (default) or `CNAME`. */
  setupRecordType?: "TXT" | "CNAME";
  /** DNS zone the record goes into; defaults to the domain. */
  zone?: string;
  /** Wait in `up` until the service has verified the published record (a `DomainVerification`, or `verifyDomain`). */
  verify?: boolean;
}

export interface TenantWebhook {
  name: string;
  url: string;
  events: EventName[];
}

/**
 * Ids of objects that exist already on the service, adopted instead of
 * created (each resource's `importId`): moving tenants in from another stack,
 * a script or by-hand setup. Nothing adopted is changed or recreated.
 */
export interface TenantIds {
  organization?: string;
  /** `<organizationId>/<groupId>`. */
  group?: string;
  /** `<organizationId>/<subscriptionId>`. */
  subscription?: string;
  /** By domain name: `<organizationId>/<domain>`. */
  domains?: Record<string, string>;
  /** By e-mail address: `<organizationId>/<email>`. */
  admins?: Record<string, string>;
  /** By webhook name: the webhook's object id. */
  webhooks?: Record<string, string>;
}

/**
 * Publishes a domain's setup record with the partner's DNS provider, in the
 * same `up`: given the record and its Domain, returns the DNS resource, e.g.
 * `(record, domain, opts) => new cloudflare.DnsRecord(..., { name: record.name, content: record.value, ... }, opts)`.
 */
export type PublishRecord = (
  record: pulumi.Output<DnsSetupRecord>,
  domain: Domain,
  opts: pulumi.CustomResourceOptions,
) => pulumi.Resource;

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

/** What destroying the tenant does: delete its organisation, only cancel its subscriptions, or leave the service untouched. */
export type TenantOnDelete = "delete" | "cancelSubscriptions" | "keep";

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
    // Kept tenants are only forgotten: every resource retained, the organisation's delete never runs.
    const retain = { parent: this, ...(onDelete === "keep" ? { retainOnDelete: true } : {}) };
    const name = (...parts: string[]) => [key, ...parts].join("/");
    const adopt = (id: string | undefined) => (id === undefined ? {} : { importId: id });

    this.organization = new Organization(
      key,
      {
        name: args.name,
        onDelete: onDelete === "delete" ? "delete" : "cancelSubscriptions",
        ...adopt(existing.organization),
      },
      retain,
    );
    const organizationId = this.organization.organizationId;
    this.organizationId = organizationId;
    this.group = new DomainGroup(name("group"), { organizationId, name: args.group, ...adopt(existing.group) }, retain);
    const priceId = pulumi.output(args.plans ?? getPlans()).apply((plans) => priceIdFor(plans, args.plan, label));
    this.subscription = new Subscription(
      name("subscription"),
      { organizationId, priceId, ...adopt(existing.subscription) },
      retain,
    );
    this.subscriptionStatus = this.subscription.status;
    this.invitations = Object.fromEntries(
      (args.admins ?? []).map((email) => [
        email,
        new Invitation(
          name("admin", email),
          { organizationId, email, role: "admin", ...adopt(existing.admins?.[email]) },
          retain,
        ),
      ]),
    );
    this.webhooks = Object.fromEntries(
      (args.webhooks ?? []).map((webhook) => [
        webhook.name,
        new Webhook(
          name("webhook", webhook.name),
          {
            name: webhook.name,
            url: webhook.url,
            events: webhook.events,
            ownerId: organizationId,
            ...adopt(existing.webhooks?.[webhook.name]),
          },
          retain,
        ),
      ]),
    );
    // After the subscription, so the plan's domain limit applies rather than the trial's; after the
    // webhooks, so they see each domain's domain.created event.
    const before = [this.subscription, ...Object.values(this.webhooks)];
    this.domains = Object.fromEntries(
      (args.domains ?? []).map((entry) => [entry.name, this.declareDomain(entry, args, existing, retain, before)]),
    );
    this.records = pulumi.output(
      Object.fromEntries(Object.entries(this.domains).map(([domain, outputs]) => [domain, outputs.record])),
    );
    this.webhookSecrets = pulumi.secret(
      Object.fromEntries(Object.entries(this.webhooks).map(([hook, webhook]) => [hook, webhook.secret])),
    );
    this.ids = idsOf(this);
    // The properties above are the component's outputs for programs. Recorded again as the
    // component's state they would repeat what its resources hold, some 2 KB a tenant in a
    // checkpoint the engine rewrites after every step; a fleet's shard exports them once.
    this.registerOutputs({});
  }

  private declareDomain(
    entry: TenantDomain,
    args: TenantArgs,
    existing: TenantIds,
    retain: pulumi.CustomResourceOptions,
    before: pulumi.Resource[],
  ): TenantDomainOutputs {
    const domain = new Domain(
      entry.name,
      {
        organizationId: this.organizationId,
        domain: entry.name,
        groupId: this.group.groupId,
        ...(entry.type ? { type: entry.type } : {}),
        ...(entry.setupRecordType ? { setupRecordType: entry.setupRecordType } : {}),
        ...(entry.zone ? { zone: entry.zone } : {}),
        ...(existing.domains?.[entry.name] === undefined ? {} : { importId: existing.domains[entry.name] }),
      },
      { ...retain, dependsOn: before },
    );
    const record = domain.setupRecord;
    const published = args.publishRecord?.(record, domain, { parent: this, dependsOn: [domain] });
    const verify = args.verifyDomain ?? waitForTheService(entry.name);
    const verification = entry.verify
      ? verify(domain, published, { parent: this, dependsOn: published ? [published] : [domain] })
      : undefined;
    return { domain, record, ...(published ? { published } : {}), ...(verification ? { verification } : {}) };
  }
}

/** Declarations the resources' own checks cannot see: names that would collide, and options that need another option. */
function checkArgs(key: string, args: TenantArgs, label: string): void {
  const problems: string[] = [];
  if (!/^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(key)) {
    problems.push(`${label}: key "${key}" must be lower-case letters and digits in words joined by hyphens`);
  }
  const once = (values: readonly string[], field: string) => {
    values.forEach((value, index) => {
      if (values.indexOf(value) !== index) problems.push(`${label}: ${field}[${index}] "${value}" is listed already`);
    });
  };
  once(
    (args.domains ?? []).map((domain) => domain.name),
    "domains",
  );
  once(args.admins ?? [], "admins");
  once(
    (args.webhooks ?? []).map((webhook) => webhook.name),
    "webhooks",
  );
  if (problems.length > 0) throw new TenantError(problems);
}

/** The price of the tenant's plan, or an error naming the tenant and its `plan`. */
export function priceIdFor(plans: readonly Plan[], plan: TenantPlan, label: string): string {
  try {
    return selectPriceId(plans, {
      plan: plan.name,
      ...(plan.frequency ? { frequency: plan.frequency } : {}),
      ...(plan.currency ? { currency: plan.currency } : {}),
    });
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
