import type { z } from "zod";
import { type Domain, type DomainGroup, EVENT_NAMES, type Plan, type Subscription, type Webhook } from "../api";
import { FREQUENCY_NAMES, type FrequencyName, selectPriceId } from "../functions/plans";
import { statusOf } from "../resources/subscription";
import { joinId } from "../runtime/ids";
import type { TenantOnDelete, TenantSubscription } from "../tenant/tenant";
import type { DiscoveredOrganization } from "./account";
import type { AssignedKey } from "./keys";

// One discovered organisation as a tenant entry, or the reason it cannot be
// one. An entry holds the organisation's domain groups (its main one and the
// others under `groups`), its subscription as it stands (active, cancelled
// and kept so as `subscription: suspended`, or `subscription: none`) and its
// active webhooks; what it has beyond that is left out of its entry and said
// so, one line each. An organisation whose entry would make `up` create or
// change something (a group, a price the entry cannot name) gets no entry at
// all.

/** A tenant entry as the file holds it, keys in the order they are written. */
export interface TenantEntry {
  name: string;
  key: string;
  group: string;
  groups?: string[];
  plan?: string;
  frequency?: z.infer<typeof FrequencyName>;
  currency?: string;
  subscription?: Exclude<TenantSubscription, "active">;
  onDelete: TenantOnDelete;
  domains?: { name: string; type?: "parked"; group?: string }[];
  webhooks?: { name: string; url: string; events: string[] }[];
  ids: {
    organization: string;
    group: string;
    groups?: Record<string, string>;
    subscription?: string;
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
  noGroup: () =>
    "it has no domain group, and a tenant declares one: adopting it would create one (make a group on the service and import again with --append, or write its entry by hand and let up create it)",
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
    `domain group ${quoted(group.name, group.id)}${domains.length === 0 ? "" : ` and its domains ${domains.map((domain) => domain.domain).join(", ")}`}, because another group of the organisation has that name and a tenant names its groups apart`,
  ungroupedDomain: (domain: Domain) => `domain ${domain.domain}, because it is in no domain group`,
  inactiveWebhook: (webhook: Webhook) =>
    `webhook ${quoted(webhook.name, webhook.objectId)}, because it is inactive and a tenant's webhooks are active ones`,
  unknownEvents: (webhook: Webhook, events: readonly string[]) =>
    `webhook ${quoted(webhook.name, webhook.objectId)}, because this package does not know its events ${events.join(", ")}`,
  sameWebhookName: (webhook: Webhook) =>
    `webhook ${quoted(webhook.name, webhook.objectId)}, because another webhook of the organisation has that name and a tenant names its webhooks apart`,
  expiredSubscription: (subscription: Subscription) =>
    `subscription ${subscription.id}, because it expired on ${day(subscription.expireDate)}: the entry says subscription: none, and declaring a plan with subscription: active assigns it again`,
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

/** The subscription's price in the catalogue, named by its plan, frequency and currency; or why it is not. */
function pricedOf(subscription: Subscription, plans: readonly Plan[]): Priced | { reason: string } {
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
  return { plan, price };
}

/** The subscription the entry declares as it stands, or why none can be declared without a write. */
type AdoptedSubscription =
  | { state: "none"; others: []; expired?: Subscription }
  | { state: "active" | "suspended"; subscription: Subscription; priced: Priced; others: Subscription[] };

/**
 * The newest active subscription; with none active, the newest one when it
 * was cancelled (kept so: `suspended`); with none at all, `none`. An
 * expired one is `none` too: adopting it would make the next `up` renew it,
 * and a lapsed customer is renewed only when the partner says so.
 */
function adoptableSubscription(
  subscriptions: readonly Subscription[],
  plans: readonly Plan[],
): AdoptedSubscription | { reason: string } {
  const newestFirst = [...subscriptions].sort(byNewest);
  const [active, ...others] = newestFirst.filter((candidate) => statusOf(candidate) === "active");
  const [latest] = newestFirst;
  if (latest === undefined) return { state: "none", others: [] };
  if (active === undefined && statusOf(latest) === "expired") return { state: "none", others: [], expired: latest };
  const subscription = active ?? latest;
  const priced = pricedOf(subscription, plans);
  if ("reason" in priced) return priced;
  return { state: active ? "active" : "suspended", subscription, priced, others };
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

/** What the organisation's entry is made of: its groups, with their domains, subscription and webhooks. */
interface EntryParts {
  group: DomainGroup;
  /** The other groups the entry lists under `groups`: each name once, none the main group's. */
  others: DomainGroup[];
  /** Groups left out: their name is another's. */
  sameName: DomainGroup[];
  sortedDomains: Domain[];
  subscription: AdoptedSubscription;
  hooks: ReturnType<typeof adoptableWebhooks>;
}

/** The organisation's other groups, the first of each name kept; a name the entry holds already leaves its group out. */
function otherGroups(groups: readonly DomainGroup[], main: DomainGroup): Pick<EntryParts, "others" | "sameName"> {
  const others: DomainGroup[] = [];
  const sameName: DomainGroup[] = [];
  for (const group of groups) {
    if (group.id === main.id) continue;
    if (group.name === main.name || others.some((other) => other.name === group.name)) sameName.push(group);
    else others.push(group);
  }
  return { others, sameName };
}

/** What the organisation has beyond its entry, one line each. */
function leftOutOf(parts: EntryParts): string[] {
  const { sameName, sortedDomains, subscription, hooks } = parts;
  return [
    LEFT_OUT.invitedUsers(),
    ...sameName.map((other) =>
      LEFT_OUT.otherGroup(
        other,
        sortedDomains.filter((domain) => domain.domainGroupId === other.id),
      ),
    ),
    ...sortedDomains.filter((domain) => !domain.domainGroupId).map((domain) => LEFT_OUT.ungroupedDomain(domain)),
    ...(subscription.state === "none" && subscription.expired
      ? [LEFT_OUT.expiredSubscription(subscription.expired)]
      : []),
    ...subscription.others.map((other) => LEFT_OUT.otherSubscription(other)),
    ...hooks.leftOut,
  ];
}

/** The entry's words for its subscription: the plan of an adopted one, `suspended` for a cancelled one, or `none`. */
function subscriptionFields(organizationId: string, subscription: AdoptedSubscription) {
  if (subscription.state === "none") return { fields: { subscription: "none" as const }, ids: {} };
  const { plan, price } = subscription.priced;
  return {
    fields: {
      plan: plan.name,
      frequency: FREQUENCY_NAMES[price.frequency],
      currency: price.currency,
      ...(subscription.state === "suspended" ? { subscription: "suspended" as const } : {}),
    },
    ids: { subscription: joinId(organizationId, subscription.subscription.id) },
  };
}

function entryOf(discovered: DiscoveredOrganization, parts: EntryParts, options: ProposalOptions): TenantEntry {
  const organizationId = discovered.organization.id;
  const { group, others, sortedDomains, hooks } = parts;
  const groupOf = new Map([group, ...others].map((held) => [held.id, held]));
  const held = sortedDomains.filter((domain) => domain.domainGroupId && groupOf.has(domain.domainGroupId));
  const subscription = subscriptionFields(organizationId, parts.subscription);
  return {
    name: discovered.organization.name,
    key: options.key.key,
    group: group.name,
    ...(others.length > 0 ? { groups: others.map((other) => other.name) } : {}),
    ...subscription.fields,
    onDelete: options.onDelete,
    domains: held.map((domain) => ({
      name: domain.domain,
      ...(domain.type === "parked" ? { type: "parked" as const } : {}),
      ...(domain.domainGroupId === group.id ? {} : { group: groupOf.get(domain.domainGroupId ?? "")?.name ?? "" }),
    })),
    webhooks: hooks.kept.map((webhook) => ({ name: webhook.name, url: webhook.url, events: [...webhook.events] })),
    ids: {
      organization: organizationId,
      group: joinId(organizationId, group.id),
      ...(others.length > 0
        ? { groups: Object.fromEntries(others.map((other) => [other.name, joinId(organizationId, other.id)])) }
        : {}),
      ...subscription.ids,
      domains: Object.fromEntries(held.map((domain) => [domain.domain, joinId(organizationId, domain.domain)])),
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
    ...otherGroups(groups, group),
    sortedDomains: [...domains].sort((a, b) => a.domain.localeCompare(b.domain)),
    subscription,
    hooks: adoptableWebhooks(webhooks),
  };
  return {
    organizationId,
    entry: entryWithout(entryOf(discovered, parts, options), {}),
    ...(options.key.note ? { keyNote: options.key.note } : {}),
    leftOut: leftOutOf(parts),
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
