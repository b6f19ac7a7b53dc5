import type { Domain, DomainGroup, Organization, Plan, Subscription, Webhook } from "../api";
import type { DmarcClient } from "../client";

// What the service lets a partner read of its account, and nothing more:
// its organisations (pages of 100), and per organisation its domain groups,
// domains, the webhooks it owns and its subscriptions, one list request each
// (more only for an organisation with over 100 domains or groups). No call
// lists any of these across organisations, and each list holds what the
// others do not (a group without domains, a domain's type), so four requests
// an organisation is the floor. Invited users cannot be listed: the service
// reads a user only by e-mail address. The account is read first (catalogue,
// organisations, the partner's webhooks), each organisation's objects when
// the import comes to it. Every request goes through the one client, paced
// under `dmarc:requestsPerMinute`, and the lists are the client's shared
// ones, so the adoption check that follows reads them again for nothing.

/** One organisation of the partner, with everything the API lists of it. */
export interface DiscoveredOrganization {
  organization: Organization;
  groups: DomainGroup[];
  domains: Domain[];
  /** The webhooks the organisation owns. */
  webhooks: Webhook[];
  /** Cancelled and expired ones included. */
  subscriptions: Subscription[];
}

export interface DiscoveredAccount {
  /** The partner's catalogue, which names each subscription's plan, frequency and currency. */
  plans: Plan[];
  /** The organisations themselves; their objects are read with {@link discoverOrganization}. */
  organizations: Organization[];
  /** Webhooks the partner itself owns; undefined when the partner id is not configured. */
  partnerWebhooks: Webhook[] | undefined;
  /** Ids asked for with `only` that are no organisation of this partner. */
  missing: string[];
}

export interface DiscoveryOptions {
  /** Only these organisations, each read by its own request instead of listing every page. */
  only?: readonly string[];
  /** The partner's id (`dmarc:partnerId`), to list the webhooks the partner owns. */
  partnerId?: string;
}

/** One organisation's objects: four list requests side by side. */
export async function discoverOrganization(
  client: DmarcClient,
  organization: Organization,
): Promise<DiscoveredOrganization> {
  const id = organization.id;
  const [groups, domains, webhooks, subscriptions] = await Promise.all([
    client.readDomainGroups(id),
    client.readDomains(id),
    client.readWebhooks(id),
    client.readSubscriptions(id),
  ]);
  return { organization, groups, domains, webhooks, subscriptions };
}

async function organizationsOf(
  client: DmarcClient,
  only: readonly string[] | undefined,
): Promise<{ found: Organization[]; missing: string[] }> {
  if (only === undefined) return { found: await client.listOrganizations(), missing: [] };
  const ids = [...new Set(only)];
  const read = await Promise.all(ids.map((id) => client.getOrganization(id)));
  return {
    found: read.filter((organization): organization is Organization => organization !== undefined),
    missing: ids.filter((_id, index) => read[index] === undefined),
  };
}

/** Reads the partner's account: its catalogue, its organisations (not yet their objects), its own webhooks. */
export async function discoverAccount(client: DmarcClient, options: DiscoveryOptions = {}): Promise<DiscoveredAccount> {
  const [plans, { found, missing }, partnerWebhooks] = await Promise.all([
    client.listPlans(),
    organizationsOf(client, options.only),
    options.partnerId === undefined ? undefined : client.readWebhooks(options.partnerId),
  ]);
  return { plans, organizations: found, partnerWebhooks, missing };
}
