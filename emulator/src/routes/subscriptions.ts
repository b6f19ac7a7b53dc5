import {
  AssignSubscriptionRequest,
  ChangeSubscriptionPriceRequest,
  type Frequency,
  PlanList,
  Subscription,
  SubscriptionList,
  SubscriptionListQuery,
} from "pulumi-dmarc-partner/api";
import type { z } from "zod";
import { organizationInScope, subscriptionOf } from "../access";
import { audit } from "../auditLog";
import { type Context, now, param } from "../context";
import { conflict, forbidden, notFound, unprocessable } from "../errors";
import { newId } from "../ids";
import { checkDowngrade } from "../limits";
import { findPrice, type Partner } from "../partners";
import { itemFeatures, type WireProfile } from "../profiles";
import type { ApiRouter, PartnerCall } from "../router";
import type { Store, SubscriptionRecord } from "../store";
import { conform, parseInput } from "../wire";

function addTerm(from: string, frequency: Frequency, periods: number): string {
  const date = new Date(from);
  if (frequency === "y") date.setUTCFullYear(date.getUTCFullYear() + periods);
  else if (frequency === "m") date.setUTCMonth(date.getUTCMonth() + periods);
  else date.setUTCDate(date.getUTCDate() + periods);
  return date.toISOString();
}

function viewAs(profile: WireProfile, record: SubscriptionRecord): z.input<typeof Subscription> {
  const leaveOut = record.cancelledAt === null && profile.activeCancelledAt === "omitted";
  return conform(Subscription, {
    id: record.id,
    expireDate: record.expireDate,
    ...(leaveOut ? {} : { cancelledAt: record.cancelledAt }),
    items: [
      {
        id: record.itemId,
        quantity: 1,
        priceId: record.priceId,
        features: itemFeatures(profile, record.features),
        createdAt: record.createdAt,
        updatedAt: record.updatedAt,
      },
    ],
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  });
}

/** Only prices of the caller's own catalogue exist for it: any other answers 403 in the description, 404 in the guides. */
function priceOf(profile: WireProfile, partner: Partner, priceId: string) {
  const found = findPrice(partner, priceId);
  if (found) return found;
  if (profile.foreignOrganizationStatus === 403)
    throw forbidden(`Price ${priceId} is not in this partner's catalogue.`);
  throw notFound("Price", priceId);
}

function newSubscription(
  profile: WireProfile,
  partner: Partner,
  organizationId: string,
  priceId: string,
): SubscriptionRecord {
  const { plan, price } = priceOf(profile, partner, priceId);
  const at = now();
  return {
    id: newId("sub"),
    itemId: newId("si"),
    partnerId: partner.id,
    organizationId,
    planId: plan.id,
    priceId: price.id,
    features: plan.features,
    frequency: price.frequency,
    billingPeriod: price.billingPeriod,
    expireDate: addTerm(at, price.frequency, price.billingPeriod),
    cancelledAt: null,
    createdAt: at,
    updatedAt: at,
  };
}

/** What a billing entry names: the subscription's plan. */
function planOf(record: SubscriptionRecord) {
  return { label: record.planId, id: record.id };
}

function refuseIfCancelled(record: SubscriptionRecord, action: string): void {
  if (record.cancelledAt !== null) {
    throw unprocessable(
      "subscriptionId",
      `Subscription ${record.id} was cancelled at ${record.cancelledAt} and cannot be ${action}.`,
      "subscription_cancelled",
    );
  }
}

/** An organisation holds one active subscription at a time: a second assignment answers 409 (description). */
function refuseIfActive(store: Store, organizationId: string): void {
  const active = store.subscriptionsOf(organizationId).find((subscription) => subscription.cancelledAt === null);
  if (active) {
    throw conflict(
      "Subscription",
      active.id,
      "active_subscription",
      `Organization ${organizationId} already has an active subscription (${active.id}): change its price instead.`,
    );
  }
}

// The service answers a price change with a new subscription and cancels the old one (facts page, section 5).
function changePrice(store: Store, profile: WireProfile, { request, partner }: PartnerCall): SubscriptionRecord {
  const old = subscriptionOf(store, partner, param(request, "subscriptionId"));
  const body = parseInput(ChangeSubscriptionPriceRequest, request.body, "body");
  refuseIfCancelled(old, "changed");
  const replacement = newSubscription(profile, partner, old.organizationId, body.priceId);
  checkDowngrade(store, old, replacement.features.domainCount);
  Object.assign(old, { cancelledAt: replacement.createdAt, updatedAt: replacement.createdAt });
  store.subscriptions.set(replacement.id, replacement);
  audit(store, replacement, "PRODUCT_PLAN_UPGRADED", planOf(replacement));
  return replacement;
}

export function subscriptionRoutes(router: ApiRouter, { store, profile }: Context): void {
  const view = (record: SubscriptionRecord) => viewAs(profile, record);
  router.resource("GET", "/partners/plans", ({ partner }) => conform(PlanList, partner.catalogue));

  router.resource("POST", "/partners/subscriptions/assign", ({ request, reply, partner }) => {
    const body = parseInput(AssignSubscriptionRequest, request.body, "body");
    organizationInScope(store, profile, partner, body.organizationId);
    const record = newSubscription(profile, partner, body.organizationId, body.priceId);
    refuseIfActive(store, body.organizationId);
    store.subscriptions.set(record.id, record);
    audit(store, record, "PRODUCT_PLAN_UPGRADED", planOf(record));
    reply.code(201);
    return view(record);
  });

  router.resource("POST", "/partners/subscriptions/:subscriptionId", (call) => view(changePrice(store, profile, call)));

  router.resource("POST", "/partners/subscriptions/:subscriptionId/renew", ({ request, partner }) => {
    const record = subscriptionOf(store, partner, param(request, "subscriptionId"));
    refuseIfCancelled(record, "renewed");
    Object.assign(record, {
      expireDate: addTerm(record.expireDate, record.frequency, record.billingPeriod),
      updatedAt: now(),
    });
    audit(store, record, "RENEWED_SUBSCRIPTION", planOf(record));
    return view(record);
  });

  router.resource("POST", "/partners/subscriptions/:subscriptionId/cancel", ({ request, partner }) => {
    const record = subscriptionOf(store, partner, param(request, "subscriptionId"));
    refuseIfCancelled(record, "cancelled again");
    const at = now();
    Object.assign(record, { cancelledAt: at, updatedAt: at });
    audit(store, record, "BILLING_CANCELLATION_REQUESTED", planOf(record));
    return view(record);
  });

  router.resource("GET", "/partners/subscriptions", ({ request, partner }) => {
    const query = parseInput(SubscriptionListQuery, request.query, "query");
    organizationInScope(store, profile, partner, query.organizationId);
    return conform(SubscriptionList, store.subscriptionsOf(query.organizationId).map(view));
  });
}
