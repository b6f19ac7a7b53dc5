import { unprocessable } from "./errors";
import type { Partner } from "./partners";
import type { Store, SubscriptionRecord } from "./store";

// Plan limits are hard (facts page, section 5 [choice]).

function isActive(subscription: SubscriptionRecord): boolean {
  return subscription.cancelledAt === null;
}

/**
 * An organisation without any subscription may hold as many domains as the
 * partner's smallest plan allows: the spec's onboarding order adds domains
 * before the partner order assigns a plan.
 */
function trialLimit(partner: Partner): number {
  const counts = partner.catalogue.map((plan) => plan.features.domainCount);
  return counts.length > 0 ? Math.min(...counts) : 0;
}

function limitOf(subscriptions: SubscriptionRecord[]): number {
  return Math.max(...subscriptions.map((subscription) => subscription.features.domainCount));
}

/** Refuses new domains beyond the plan's domainCount or on a suspended organisation. */
export function checkRoomForDomains(store: Store, partner: Partner, organizationId: string, adding = 1): void {
  const subscriptions = store.subscriptionsOf(organizationId);
  const active = subscriptions.filter(isActive);
  if (subscriptions.length > 0 && active.length === 0) {
    throw unprocessable(
      "organizationId",
      "Every subscription of this organisation is cancelled (suspended): renew it or assign a new one first.",
      "subscription_suspended",
    );
  }
  const limit = active.length > 0 ? limitOf(active) : trialLimit(partner);
  const count = store.domainsOf(organizationId).length;
  if (count + adding > limit) {
    throw unprocessable(
      "domain",
      `The organisation's plan allows ${limit} domains and it already has ${count}.`,
      "plan_limit",
      { limit },
    );
  }
}

/** Refuses moving to a plan that allows fewer domains than the organisation already has. */
export function checkDowngrade(store: Store, replaced: SubscriptionRecord, domainCount: number): void {
  const others = store
    .subscriptionsOf(replaced.organizationId)
    .filter((subscription) => isActive(subscription) && subscription.id !== replaced.id);
  const limit = Math.max(domainCount, ...others.map((subscription) => subscription.features.domainCount));
  const count = store.domainsOf(replaced.organizationId).length;
  if (count > limit) {
    throw unprocessable(
      "priceId",
      `The new plan allows ${limit} domains but the organisation has ${count}: remove domains first.`,
      "downgrade_below_usage",
      { limit },
    );
  }
}
