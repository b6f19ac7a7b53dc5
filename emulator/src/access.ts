import { forbidden, notFound } from "./errors";
import type { Partner } from "./partners";
import type { WireProfile } from "./profiles";
import {
  type DomainGroupRecord,
  type DomainRecord,
  domainKey,
  type OrganizationRecord,
  type Store,
  type SubscriptionRecord,
  type UserRecord,
  type WebhookRecord,
} from "./store";

// Lookups on behalf of a partner. Another partner's object answers 404 exactly
// like a missing one, so existence never leaks (facts page, section 2 [choice]).

export function organizationOf(store: Store, partner: Partner, id: string): OrganizationRecord {
  const organization = store.organizations.get(id);
  if (organization?.partnerId !== partner.id) throw notFound("Organization", id);
  return organization;
}

/**
 * The organisation a call names by id (in its body or query), on routes other
 * than the organisation's own: the description answers 403 there for an
 * organisation that is not the partner's, the guides 404.
 */
export function organizationInScope(
  store: Store,
  profile: WireProfile,
  partner: Partner,
  id: string,
): OrganizationRecord {
  const organization = store.organizations.get(id);
  if (organization?.partnerId === partner.id) return organization;
  if (profile.foreignOrganizationStatus === 403) {
    throw forbidden(`Organization ${id} does not belong to this partner.`, { requiredPermissions: ["organization"] });
  }
  throw notFound("Organization", id);
}

export function domainGroupOf(store: Store, partner: Partner, id: string, organizationId?: string): DomainGroupRecord {
  const group = store.domainGroups.get(id);
  const visible =
    group?.partnerId === partner.id && (organizationId === undefined || group.organizationId === organizationId);
  if (!group || !visible) throw notFound("DomainGroup", id);
  return group;
}

export function domainOf(store: Store, partner: Partner, organizationId: string, domain: string): DomainRecord {
  const record = store.domains.get(domainKey(organizationId, domain));
  if (record?.partnerId !== partner.id) throw notFound("Domain", domain);
  return record;
}

export function webhookOf(store: Store, partner: Partner, objectId: string): WebhookRecord {
  const webhook = store.webhooks.get(objectId);
  if (webhook?.partnerId !== partner.id) throw notFound("Webhook", objectId);
  return webhook;
}

export function subscriptionOf(store: Store, partner: Partner, id: string): SubscriptionRecord {
  const subscription = store.subscriptions.get(id);
  if (subscription?.partnerId !== partner.id) throw notFound("Subscription", id);
  return subscription;
}

/** A user of the partner by id or e-mail address (the spec accepts the e-mail as userId). */
export function findUser(store: Store, partner: Partner, idOrEmail: string): UserRecord | undefined {
  const email = idOrEmail.toLowerCase();
  for (const user of store.users.values()) {
    if (user.partnerId === partner.id && (user.id === idOrEmail || user.email === email)) return user;
  }
  return undefined;
}

/** A user with access to the organisation; a revoked user answers 404. */
export function memberOf(store: Store, partner: Partner, organizationId: string, idOrEmail: string): UserRecord {
  const user = findUser(store, partner, idOrEmail);
  if (!user || user.memberships[organizationId] === undefined) throw notFound("User", idOrEmail);
  return user;
}
