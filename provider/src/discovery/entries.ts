import type { z } from "zod";
import { type Domain, type DomainGroup, EVENT_NAMES, type Plan, type Subscription, type Webhook } from "../api";
import { FREQUENCY_NAMES, type FrequencyName, selectPriceId } from "../functions/plans";
import { statusOf } from "../resources/subscription";
import { joinId } from "../runtime/ids";
import type { TenantOnDelete } from "../tenant/tenant";
import type { DiscoveredOrganization } from "./account";
import type { AssignedKey } from "./keys";

// One discovered organisation as a tenant entry of today's inventory format,
// or the reason it cannot be one. The format says one domain group, one
// active subscription and active webhooks of the organisation's own per
// tenant; what an organisation has beyond that is left out of its entry and
// said so, one line each. An organisation whose entry would make `up` create
// or change something (a group, a subscription) gets no entry at all.

/** A tenant entry as the file holds it, keys in the order they are written. */
export interface TenantEntry {
  name: string;
  key: string;
  group: string;
  plan: string;
  frequency: z.infer<typeof FrequencyName>;
  currency: string;
  onDelete: TenantOnDelete;
  domains?: { name: string; type?: "parked" }[];
  webhooks?: { name: string; url: string; events: string[] }[];
  ids: {
    organization: string;
    group: string;
    subscription: string;
    domains?: Record<string, string>;
    webhooks?: Record<string, string>;
  };
}

/** An organisation the import writes an entry for. */
export interface ProposedTenant {
  organizationId: string;
  entry: TenantEntry;
  /** Why the key is not the one the name gives, when it is not. */
  keyNote?: string;
  /** What of the organisation the entry does not hold, and why: one line each. */
  leftOut: string[];
}

/** An organisation the import writes no entry for. */
export interface LeftOutOrganization {
  organizationId: string;
  name: string;
  reason: string;
}

const quoted = (name: string, id: string) => `"${name}" (${id})`;
const day = (timestamp: string) => timestamp.slice(0, 10);

/** Why an organisation gets no entry: each would make the tenant's `up` create or change something. */
const NO_ENTRY = {
  noGroup: () => "it has no domain group, and a tenant declares one: adopting it would create one",
  noSubscription: () => "it has no subscription, and a tenant declares a plan: adopting it would assign one",
  cancelled: (subscription: Subscription) =>
    `its subscription ${subscription.id} was cancelled on ${day(subscription.cancelledAt ?? "")}, and a tenant's subscription is an active one: the next up would assign a new one`,
  expired: (subscription: Subscription) =>
    `its subscription ${subscription.id} expired on ${day(subscription.expireDate)}, and a tenant's subscription is an active one: the next up would renew it`,
  noPrice: (subscription: Subscription) => `its subscription ${subscription.id} names no price`,
  priceNotInCatalogue: (priceId: string) =>
    `its subscription's price ${priceId} is not in the partner's catalogue, so no plan, frequency and currency name it`,
  priceNotNamed: (priceId: string, why: string) =>
    `its subscription's price ${priceId} is not the one its plan, frequency and currency name: ${why}`,
} as const;

/** What an entry leaves out of its organisation, and why. */
export const LEFT_OUT = {
  invitedUsers: () =>
    "invited users, because the service has no call that lists an organisation's users (add admins and their ids.admins by hand)",
  otherGroup: (group: DomainGroup, domains: readonly Domain[]) =>
    `domain group ${quoted(group.name, group.id)}${domains.length === 0 ? "" : ` and its domains ${domains.map((domain) => domain.domain).join(", ")}`}, because a tenant has one domain group`,
  ungroupedDomain: (domain: Domain) => `domain ${domain.domain}, because it is in no domain group`,
  inactiveWebhook: (webhook: Webhook) =>
    `webhook ${quoted(webhook.name, webhook.objectId)}, because it is inactive and a tenant's webhooks are active ones`,
  unknownEvents: (webhook: Webhook, events: readonly string[]) =>
    `webhook ${quoted(webhook.name, webhook.objectId)}, because this package does not know its events ${events.join(", ")}`,
  sameWebhookName: (webhook: Webhook) =>
    `webhook ${quoted(webhook.name, webhook.objectId)}, because another webhook of the organisation has that name and a tenant names its webhooks apart`,
  otherSubscription: (subscription: Subscription) =>
    `subscription ${subscription.id} (active too, price ${subscription.items[0]?.priceId ?? "none"}), because a tenant has one subscription: the newest is kept`,
  domainOfAnotherTenant: (domain: string, owner: string) =>
    `domain ${domain}, because ${owner} lists it and a domain belongs to one tenant in the inventory`,
  refused: (what: string, reason: string) => `${what}, because ${reason}`,
} as const;

function byNewest(a: Subscription, b: Subscription): number {
  return Date.parse(b.createdAt) - Date.parse(a.createdAt) || b.id.localeCompare(a.id);
}

/** The group holding most of the organisation's domains; on a tie, the one the service lists first. */
function mainGroup(groups: readonly DomainGroup[], domains: readonly Domain[]): DomainGroup | undefined {
  const size = (group: DomainGroup) => domains.filter((domain) => domain.domainGroupId === group.id).length;
  return groups.reduce<DomainGroup | undefined>(
    (best, group) => (best === undefined || size(group) > size(best) ? group : best),
    undefined,
  );
}

type Priced = { plan: Plan; price: Plan["prices"][number] };

/** The subscription to adopt and its price in the catalogue, or why there is none. */
function adoptableSubscription(
  subscriptions: readonly Subscription[],
  plans: readonly Plan[],
): { subscription: Subscription; priced: Priced; others: Subscription[] } | { reason: string } {
  const newestFirst = [...subscriptions].sort(byNewest);
  const [subscription, ...others] = newestFirst.filter((candidate) => statusOf(candidate) === "active");
  if (subscription === undefined) {
    const [latest] = newestFirst;
    if (latest === undefined) return { reason: NO_ENTRY.noSubscription() };
    return { reason: statusOf(latest) === "suspended" ? NO_ENTRY.cancelled(latest) : NO_ENTRY.expired(latest) };
  }
  const priceId = subscription.items[0]?.priceId;
  if (priceId === undefined) return { reason: NO_ENTRY.noPrice(subscription) };
  const plan = plans.find((candidate) => candidate.prices.some((price) => price.id === priceId));
  const price = plan?.prices.find((candidate) => candidate.id === priceId);
  if (plan === undefined || price === undefined) return { reason: NO_ENTRY.priceNotInCatalogue(priceId) };
  let named: string;
  try {
    named = selectPriceId(plans, {
      plan: plan.name,
      frequency: FREQUENCY_NAMES[price.frequency],
      currency: price.currency,
    });
  } catch (error) {
    return { reason: NO_ENTRY.priceNotNamed(priceId, (error as Error).message) };
  }
  if (named !== priceId) return { reason: NO_ENTRY.priceNotNamed(priceId, `they name ${named}`) };
  return { subscription, priced: { plan, price }, others };
}

/** The organisation's active webhooks with names of their own and known events; the others, each with its reason. */
function adoptableWebhooks(webhooks: readonly Webhook[]): { kept: Webhook[]; leftOut: string[] } {
  const kept: Webhook[] = [];
  const leftOut: string[] = [];
  const known: readonly string[] = EVENT_NAMES;
  const sorted = [...webhooks].sort((a, b) => a.name.localeCompare(b.name) || a.objectId.localeCompare(b.objectId));
  for (const webhook of sorted) {
    const unknown = webhook.events.filter((event) => !known.includes(event));
    if (!webhook.active) leftOut.push(LEFT_OUT.inactiveWebhook(webhook));
    else if (unknown.length > 0) leftOut.push(LEFT_OUT.unknownEvents(webhook, unknown));
    else if (kept.some((other) => other.name === webhook.name)) leftOut.push(LEFT_OUT.sameWebhookName(webhook));
    else kept.push(webhook);
  }
  return { kept, leftOut };
}

export interface ProposalOptions {
  key: AssignedKey;
  onDelete: TenantOnDelete;
  plans: readonly Plan[];
}

type Adoptable = Exclude<ReturnType<typeof adoptableSubscription>, { reason: string }>;

/** What the organisation's entry is made of: its main group, with its domains, subscription and webhooks. */
interface EntryParts {
  group: DomainGroup;
  sortedDomains: Domain[];
  subscription: Adoptable;
  hooks: ReturnType<typeof adoptableWebhooks>;
}

/** What the organisation has beyond its entry, one line each. */
function leftOutOf(discovered: DiscoveredOrganization, parts: EntryParts): string[] {
  const { group, sortedDomains, subscription, hooks } = parts;
  return [
    LEFT_OUT.invitedUsers(),
    ...discovered.groups
      .filter((other) => other.id !== group.id)
      .map((other) =>
        LEFT_OUT.otherGroup(
          other,
          sortedDomains.filter((domain) => domain.domainGroupId === other.id),
        ),
      ),
    ...sortedDomains.filter((domain) => !domain.domainGroupId).map((domain) => LEFT_OUT.ungroupedDomain(domain)),
    ...subscription.others.map((other) => LEFT_OUT.otherSubscription(other)),
    ...hooks.leftOut,
  ];
}

function entryOf(discovered: DiscoveredOrganization, parts: EntryParts, options: ProposalOptions): TenantEntry {
  const { organization } = discovered;
  const organizationId = organization.id;
  const { group, sortedDomains, subscription, hooks } = parts;
  const inGroup = sortedDomains.filter((domain) => domain.domainGroupId === group.id);
  const { plan, price } = subscription.priced;
  return {
    name: organization.name,
    key: options.key.key,
    group: group.name,
    plan: plan.name,
    frequency: FREQUENCY_NAMES[price.frequency],
    currency: price.currency,
    onDelete: options.onDelete,
    domains: inGroup.map((domain) =>
      domain.type === "parked" ? { name: domain.domain, type: "parked" } : { name: domain.domain },
    ),
    webhooks: hooks.kept.map((webhook) => ({ name: webhook.name, url: webhook.url, events: [...webhook.events] })),
    ids: {
      organization: organizationId,
      group: joinId(organizationId, group.id),
      subscription: joinId(organizationId, subscription.subscription.id),
      domains: Object.fromEntries(inGroup.map((domain) => [domain.domain, joinId(organizationId, domain.domain)])),
      webhooks: Object.fromEntries(hooks.kept.map((webhook) => [webhook.name, webhook.objectId])),
    },
  };
}

/** The organisation's tenant entry, or why it gets none. */
export function proposeTenant(
  discovered: DiscoveredOrganization,
  options: ProposalOptions,
): ProposedTenant | LeftOutOrganization {
  const { organization, groups, domains, webhooks, subscriptions } = discovered;
  const organizationId = organization.id;
  const leftOutWhole = (reason: string): LeftOutOrganization => ({ organizationId, name: organization.name, reason });
  const group = mainGroup(groups, domains);
  if (group === undefined) return leftOutWhole(NO_ENTRY.noGroup());
  const subscription = adoptableSubscription(subscriptions, options.plans);
  if ("reason" in subscription) return leftOutWhole(subscription.reason);
  const parts: EntryParts = {
    group,
    sortedDomains: [...domains].sort((a, b) => a.domain.localeCompare(b.domain)),
    subscription,
    hooks: adoptableWebhooks(webhooks),
  };
  return {
    organizationId,
    entry: entryWithout(entryOf(discovered, parts, options), {}),
    ...(options.key.note ? { keyNote: options.key.note } : {}),
    leftOut: leftOutOf(discovered, parts),
  };
}

/** The entry without the domains and webhooks named; empty lists and id maps are not written. */
export function entryWithout(
  entry: TenantEntry,
  left: { domains?: readonly string[]; webhooks?: readonly string[] },
): TenantEntry {
  const keptDomains = (entry.domains ?? []).filter((domain) => !left.domains?.includes(domain.name));
  const keptWebhooks = (entry.webhooks ?? []).filter((webhook) => !left.webhooks?.includes(webhook.name));
  const pick = (ids: Record<string, string> | undefined, kept: readonly { name: string }[]) =>
    Object.fromEntries(Object.entries(ids ?? {}).filter(([name]) => kept.some((item) => item.name === name)));
  const domainIds = pick(entry.ids.domains, keptDomains);
  const webhookIds = pick(entry.ids.webhooks, keptWebhooks);
  const { domains: _domains, webhooks: _webhooks, ids, ...rest } = entry;
  const { domains: _domainIds, webhooks: _webhookIds, ...coreIds } = ids;
  return {
    ...rest,
    ...(keptDomains.length > 0 ? { domains: keptDomains } : {}),
    ...(keptWebhooks.length > 0 ? { webhooks: keptWebhooks } : {}),
    ids: {
      ...coreIds,
      ...(Object.keys(domainIds).length > 0 ? { domains: domainIds } : {}),
      ...(Object.keys(webhookIds).length > 0 ? { webhooks: webhookIds } : {}),
    },
  };
}
