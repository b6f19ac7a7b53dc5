import {
  AssignSubscriptionRequest,
  ChangeSubscriptionPriceRequest,
  type Frequency,
  PlanList,
  Subscription,
  SubscriptionList,
  SubscriptionListQuery,
} from "pulumi-dmarc-partner/api";
import { organizationOf, subscriptionOf } from "../access";
import { type Context, now, param } from "../context";
import { notFound, unprocessable } from "../errors";
import { newId } from "../ids";
import { checkDowngrade } from "../limits";
import { findPrice, type Partner } from "../partners";
import type { ApiRouter } from "../router";
import type { SubscriptionRecord } from "../store";
import { conform, parseInput } from "../wire";

function addTerm(from: string, frequency: Frequency, periods: number): string {
  const date = new Date(from);
  if (frequency === "y") date.setUTCFullYear(date.getUTCFullYear() + periods);
  else if (frequency === "m") date.setUTCMonth(date.getUTCMonth() + periods);
  else date.setUTCDate(date.getUTCDate() + periods);
  return date.toISOString();
}

function view(record: SubscriptionRecord): Subscription {
  return conform(Subscription, {
    id: record.id,
    expireDate: record.expireDate,
    cancelledAt: record.cancelledAt,
    items: [
      {
        id: record.itemId,
        quantity: 1,
        priceId: record.priceId,
        features: record.features,
        createdAt: record.createdAt,
        updatedAt: record.updatedAt,
      },
    ],
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  });
}

/** Only prices of the caller's own catalogue exist for it; any other answers 404. */
function priceOf(partner: Partner, priceId: string) {
  const found = findPrice(partner, priceId);
  if (!found) throw notFound("Price", priceId);
  return found;
}

function newSubscription(partner: Partner, organizationId: string, priceId: string): SubscriptionRecord {
  const { plan, price } = priceOf(partner, priceId);
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

function refuseIfCancelled(record: SubscriptionRecord, action: string): void {
  if (record.cancelledAt !== null) {
    throw unprocessable(
      "subscriptionId",
      `Subscription ${record.id} was cancelled at ${record.cancelledAt} and cannot be ${action}.`,
      "subscription_cancelled",
    );
  }
}

export function subscriptionRoutes(router: ApiRouter, { store }: Context): void {
  router.resource("GET", "/partners/plans", ({ partner }) => conform(PlanList, partner.catalogue));

  router.resource("POST", "/partners/subscriptions/assign", ({ request, reply, partner }) => {
    const body = parseInput(AssignSubscriptionRequest, request.body, "body");
    organizationOf(store, partner, body.organizationId);
    const record = newSubscription(partner, body.organizationId, body.priceId);
    store.subscriptions.set(record.id, record);
    reply.code(201);
    return view(record);
  });

  // The service answers a price change with a new subscription and cancels the old one (facts page, section 5).
  router.resource("POST", "/partners/subscriptions/:subscriptionId", ({ request, partner }) => {
    const old = subscriptionOf(store, partner, param(request, "subscriptionId"));
    const body = parseInput(ChangeSubscriptionPriceRequest, request.body, "body");
    refuseIfCancelled(old, "changed");
    const replacement = newSubscription(partner, old.organizationId, body.priceId);
    checkDowngrade(store, old, replacement.features.domainCount);
    Object.assign(old, { cancelledAt: replacement.createdAt, updatedAt: replacement.createdAt });
    store.subscriptions.set(replacement.id, replacement);
    return view(replacement);
  });

  router.resource("POST", "/partners/subscriptions/:subscriptionId/renew", ({ request, partner }) => {
    const record = subscriptionOf(store, partner, param(request, "subscriptionId"));
    refuseIfCancelled(record, "renewed");
    Object.assign(record, {
      expireDate: addTerm(record.expireDate, record.frequency, record.billingPeriod),
      updatedAt: now(),
    });
    return view(record);
  });

  router.resource("POST", "/partners/subscriptions/:subscriptionId/cancel", ({ request, partner }) => {
    const record = subscriptionOf(store, partner, param(request, "subscriptionId"));
    refuseIfCancelled(record, "cancelled again");
    const at = now();
    Object.assign(record, { cancelledAt: at, updatedAt: at });
    return view(record);
  });

  router.resource("GET", "/partners/subscriptions", ({ request, partner }) => {
    const query = parseInput(SubscriptionListQuery, request.query, "query");
    organizationOf(store, partner, query.organizationId);
    return conform(SubscriptionList, store.subscriptionsOf(query.organizationId).map(view));
  });
}
