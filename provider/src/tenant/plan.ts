import type { PriceSelector } from "../functions/plans";
import { IMPORT_KEY } from "../runtime/host";
import { repeats } from "../runtime/values";
import {
  TENANT_KEY_RULE,
  type TenantDomain,
  type TenantIds,
  TenantKey,
  type TenantOnDelete,
  type TenantSubscription,
  type TenantWebhook,
} from "./schema";
import { policyRefusals } from "./staging";

// The one mapping from a tenant's declaration to the objects it declares,
// with no engine: the Tenant component turns the list into resources, the
// import's adoption check runs each through the provider host, the fleet's
// digest hashes it. A name, input or option written here is what every one
// of them sees.

/** The tenant's plan: a price selector whose plan is given by `name`. */
export interface TenantPlan extends Omit<PriceSelector, "plan"> {
  /** Plan name of the partner's catalogue, matched without regard to case, e.g. `Business`. */
  name: PriceSelector["plan"];
}

/** What a tenant declares; `Text` is a plain string here, a `pulumi.Input<string>` in a program. */
export interface TenantDeclaration<Text = string> {
  /** The organisation's name. Renaming updates the organisation in place: the resource name (the key) stays. */
  name: Text;
  /** Name of the tenant's domain group. */
  group: Text;
  /** Further domain groups, by name: a domain with `group` set to one of them is in it. */
  groups?: string[];
  /** Plan and frequency, resolved against the catalogue; not needed with `subscription: "none"`. */
  plan?: TenantPlan;
  /** `active` (default), `suspended` (an adopted cancelled subscription kept cancelled) or `none` (no Subscription). */
  subscription?: TenantSubscription;
  domains?: TenantDomain[];
  /** E-mail addresses invited as administrators. */
  admins?: string[];
  /** Webhooks owned by the organisation: they receive its events only and go when it goes. */
  webhooks?: TenantWebhook[];
  /** `delete` (default), `cancelSubscriptions` (the organisation and its data stay) or `keep` (nothing on the service is touched). */
  onDelete?: TenantOnDelete;
  /** Existing objects to adopt instead of creating. */
  existingIds?: TenantIds;
}

/** An input taken from another planned object's output once that object exists, e.g. the organisation's id. */
export class OutputOf {
  constructor(
    /** The resource name of the planned object. */
    readonly object: string,
    readonly output: "organizationId" | "groupId",
  ) {}
}

/** The price the partner's catalogue gives the tenant's plan: known once the catalogue is read. */
export class PriceOf {
  constructor(readonly plan: TenantPlan) {}
}

/** Which part of an entry declares an object, so a failing domain or webhook can be left out alone. */
export type EntryPart = { kind: "tenant" } | { kind: "domain" | "webhook" | "admin"; name: string };

export type PlannedType = "Organization" | "DomainGroup" | "Subscription" | "Invitation" | "Webhook" | "Domain";

/** One object the tenant declares. */
export interface PlannedObject {
  type: PlannedType;
  /** The resource name: `acme`, `acme/group`, `acme.example`. */
  name: string;
  /** What it is, in messages: `domain acme.example`. */
  what: string;
  part: EntryPart;
  /** Plain values, `OutputOf` and `PriceOf`; `importId` when the object is adopted. */
  inputs: Record<string, unknown>;
  /** `onDelete: keep`: its delete leaves the object on the service. */
  retainOnDelete: boolean;
  /** Resource names of planned objects created before it. */
  dependsOn: string[];
  /** A domain whose verification `up` waits for. */
  verify?: boolean;
}

/** A problem with a tenant's declaration, one line each. */
export class TenantPlanError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.join("\n"));
  }
}

const TENANT: EntryPart = { kind: "tenant" };

function adopting(id: string | undefined): Record<string, string> {
  return id === undefined ? {} : { [IMPORT_KEY]: id };
}

/** What every object of one tenant shares: names, the option `onDelete` sets, the ids it adopts. */
interface PlanScope {
  key: string;
  ids: TenantIds;
  retainOnDelete: boolean;
  organization: OutputOf;
}

function organizationAndGroups<Text>(scope: PlanScope, tenant: TenantDeclaration<Text>): PlannedObject[] {
  const { key, ids, retainOnDelete } = scope;
  const onDelete = tenant.onDelete ?? "delete";
  const group = (name: string, groupName: unknown, id: string | undefined): PlannedObject => ({
    type: "DomainGroup",
    name,
    what: `domain group ${id ?? `"${String(groupName)}"`}`,
    part: TENANT,
    inputs: { organizationId: scope.organization, name: groupName, ...adopting(id) },
    retainOnDelete,
    dependsOn: [],
  });
  return [
    {
      type: "Organization",
      name: key,
      what: `organisation ${ids.organization ?? key}`,
      part: TENANT,
      // `keep` and `cancelSubscriptions` both leave the organisation on the service.
      inputs: {
        name: tenant.name,
        onDelete: onDelete === "delete" ? "delete" : "cancelSubscriptions",
        ...adopting(ids.organization),
      },
      retainOnDelete,
      dependsOn: [],
    },
    group(`${key}/group`, tenant.group, ids.group),
    ...(tenant.groups ?? []).map((name) => group(`${key}/group/${name}`, name, ids.groups?.[name])),
  ];
}

function subscriptionOf<Text>(scope: PlanScope, tenant: TenantDeclaration<Text>): PlannedObject[] {
  const state = tenant.subscription ?? "active";
  if (state === "none" || tenant.plan === undefined) return [];
  return [
    {
      type: "Subscription",
      name: `${scope.key}/subscription`,
      what: `subscription ${scope.ids.subscription ?? "(no id)"}`,
      part: TENANT,
      inputs: {
        organizationId: scope.organization,
        priceId: new PriceOf(tenant.plan),
        ...(state === "suspended" ? { suspended: true } : {}),
        ...adopting(scope.ids.subscription),
      },
      retainOnDelete: scope.retainOnDelete,
      dependsOn: [],
    },
  ];
}

function adminsAndWebhooks<Text>(scope: PlanScope, tenant: TenantDeclaration<Text>): PlannedObject[] {
  const { key, ids, retainOnDelete, organization } = scope;
  const admins = (tenant.admins ?? []).map(
    (email): PlannedObject => ({
      type: "Invitation",
      name: `${key}/admin/${email}`,
      what: `admin ${email}`,
      part: { kind: "admin", name: email },
      inputs: { organizationId: organization, email, role: "admin", ...adopting(ids.admins?.[email]) },
      retainOnDelete,
      dependsOn: [],
    }),
  );
  const webhooks = (tenant.webhooks ?? []).map((webhook): PlannedObject => {
    const id = ids.webhooks?.[webhook.name];
    return {
      type: "Webhook",
      name: `${key}/webhook/${webhook.name}`,
      what: `webhook "${webhook.name}"${id ? ` (${id})` : ""}`,
      part: { kind: "webhook", name: webhook.name },
      inputs: { ...webhook, ownerId: organization, ...adopting(id) },
      retainOnDelete,
      dependsOn: [],
    };
  });
  return [...admins, ...webhooks];
}

/**
 * The tenant's domains, each in its group. After the subscription, so the
 * plan's domain limit applies rather than the trial's; after the webhooks,
 * so they see each domain's domain.created event.
 */
function domainsOf<Text>(scope: PlanScope, tenant: TenantDeclaration<Text>, before: string[]): PlannedObject[] {
  const domains = tenant.domains ?? [];
  // The ramp shapes the published record, not the Domain: the service knows nothing of it.
  return domains.map(({ name, verify, group, policy: _policy, ...settings }) => ({
    type: "Domain",
    // A domain is named after itself.
    name,
    what: `domain ${name}`,
    part: { kind: "domain", name },
    inputs: {
      organizationId: scope.organization,
      domain: name,
      groupId: new OutputOf(groupObjectName(scope.key, tenant, group), "groupId"),
      // The new ones among them go out as one batch, however the engine spaces their creates.
      declaredTogether: domains.length,
      ...settings,
      ...adopting(scope.ids.domains?.[name]),
    },
    retainOnDelete: scope.retainOnDelete,
    dependsOn: before,
    ...(verify ? { verify } : {}),
  }));
}

/** The resource name of the group a domain names: the tenant's `group` or one of its `groups`. */
function groupObjectName<Text>(key: string, tenant: TenantDeclaration<Text>, group: string | undefined): string {
  return group !== undefined && (tenant.groups ?? []).includes(group) ? `${key}/group/${group}` : `${key}/group`;
}

/** A domain's ramp must hold together, and a record the service hosts has none here. */
function domainPolicyRefusals(domain: TenantDomain, position: number, label: string): string[] {
  if (domain.policy === undefined) return [];
  const where = `${label}: domain ${domain.name} (domains[${position}])`;
  if (domain.setupRecordType === "CNAME")
    return [
      `${where} policy: cannot be set: the service hosts this domain's record (setupRecordType: CNAME), so its policy is set in the service, not here`,
    ];
  return policyRefusals(domain.policy, where);
}

/** What the objects' own checks cannot see: names that would collide, a group or plan that is not there. */
function problemsOf<Text>(key: string, tenant: TenantDeclaration<Text>, label: string): string[] {
  const problems: string[] = [];
  if (!TenantKey.safeParse(key).success) problems.push(`${label}: key "${key}" ${TENANT_KEY_RULE}`);
  const listedOnce = (values: readonly string[], field: string) => {
    for (const { position } of repeats(values))
      problems.push(`${label}: ${field}[${position}] "${values[position]}" is listed already`);
  };
  const domains = tenant.domains ?? [];
  listedOnce(
    domains.map((domain) => domain.name),
    "domains",
  );
  listedOnce(tenant.admins ?? [], "admins");
  listedOnce(
    (tenant.webhooks ?? []).map((webhook) => webhook.name),
    "webhooks",
  );
  const groups = tenant.groups ?? [];
  listedOnce(groups, "groups");
  groups.forEach((group, position) => {
    if (group === tenant.group) problems.push(`${label}: groups[${position}] "${group}" is the tenant's group already`);
  });
  domains.forEach((domain, position) => {
    if (domain.group !== undefined && domain.group !== tenant.group && !groups.includes(domain.group))
      problems.push(
        `${label}: domains[${position}].group "${domain.group}" is neither the tenant's group nor one of its groups`,
      );
  });
  problems.push(...domains.flatMap((domain, position) => domainPolicyRefusals(domain, position, label)));
  if ((tenant.subscription ?? "active") !== "none" && tenant.plan === undefined)
    problems.push(`${label}: plan is required unless subscription is none`);
  return problems;
}

/**
 * Every object the tenant declares, in the order the Tenant registers them:
 * organisation, groups, subscription, invitations, webhooks, domains. Names
 * are the tenant's key followed by what the object is (`acme-corp/group`,
 * `acme-corp/admin/alice@acme.example`); a domain is named after itself.
 * Fails with a `TenantPlanError` listing every problem.
 */
export function tenantPlan<Text>(key: string, tenant: TenantDeclaration<Text>, label: string): PlannedObject[] {
  const problems = problemsOf(key, tenant, label);
  if (problems.length > 0) throw new TenantPlanError(problems);
  const scope: PlanScope = {
    key,
    ids: tenant.existingIds ?? {},
    // Kept tenants are only forgotten: every object retained, the organisation's delete never runs.
    retainOnDelete: tenant.onDelete === "keep",
    organization: new OutputOf(key, "organizationId"),
  };
  const head = [...organizationAndGroups(scope, tenant), ...subscriptionOf(scope, tenant)];
  const members = adminsAndWebhooks(scope, tenant);
  const before = [
    ...head.filter((object) => object.type === "Subscription"),
    ...members.filter((object) => object.type === "Webhook"),
  ].map((object) => object.name);
  return [...head, ...members, ...domainsOf(scope, tenant, before)];
}
