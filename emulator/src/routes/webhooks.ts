import { randomBytes } from "node:crypto";
import {
  CreateWebhookRequest,
  DeliveryList,
  MAX_WEBHOOKS_PER_OWNER,
  PageQuery,
  UpdateWebhookRequest,
  Webhook,
  WebhookList,
  WebhookWithSecret,
} from "pulumi-dmarc-partner/api";
import { webhookOf } from "../access";
import { type Context, now, param } from "../context";
import { invalid, notFound, unprocessable } from "../errors";
import { newId } from "../ids";
import { paginateAs } from "../pagination";
import type { Partner } from "../partners";
import type { ApiRouter, PartnerCall } from "../router";
import type { Store, WebhookRecord } from "../store";
import { conform, parseInput } from "../wire";

/** Standard Webhooks secret: `whsec_` and base64 of 24 random bytes. */
function newSecret(): string {
  return `whsec_${randomBytes(24).toString("base64")}`;
}

function view(record: WebhookRecord): Webhook {
  return conform(Webhook, {
    objectId: record.objectId,
    name: record.name,
    ownerId: record.ownerId,
    url: record.url,
    events: record.events,
    active: record.active,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  });
}

function viewWithSecret(record: WebhookRecord): WebhookWithSecret {
  return conform(WebhookWithSecret, { ...view(record), secret: record.secret });
}

/**
 * The owner is the partner itself (events of all its organisations) or one of
 * its organisations (that organisation's events): anything else would be a
 * webhook that never hears an event.
 */
function checkOwner(store: Store, partner: Partner, ownerId: string, status: number): void {
  const organization = store.organizations.get(ownerId);
  if (ownerId === partner.id || organization?.partnerId === partner.id) return;
  throw invalid(
    [{ field: "ownerId", message: `must be your partner id (${partner.id}) or the id of one of your organisations` }],
    undefined,
    status,
  );
}

function createWebhook(
  { store, profile }: Context,
  { request, reply, partner }: PartnerCall,
): Webhook | WebhookWithSecret {
  const body = parseInput(CreateWebhookRequest, request.body, "body", profile.webhookValidationStatus);
  checkOwner(store, partner, body.ownerId, profile.webhookValidationStatus);
  const owned = [...store.webhooks.values()].filter(
    (webhook) => webhook.partnerId === partner.id && webhook.ownerId === body.ownerId,
  );
  if (owned.length >= MAX_WEBHOOKS_PER_OWNER) {
    throw unprocessable("ownerId", `An owner may have at most ${MAX_WEBHOOKS_PER_OWNER} webhooks.`, "webhook_limit", {
      limit: MAX_WEBHOOKS_PER_OWNER,
    });
  }
  const at = now();
  const record: WebhookRecord = {
    objectId: newId("wh"),
    partnerId: partner.id,
    name: body.name,
    ownerId: body.ownerId,
    url: body.url,
    events: [...new Set(body.events)],
    active: body.active ?? true,
    secret: newSecret(),
    createdAt: at,
    updatedAt: at,
  };
  store.webhooks.set(record.objectId, record);
  reply.code(201);
  return profile.secretOnCreate ? viewWithSecret(record) : view(record);
}

function updateWebhook({ store, profile }: Context, { request, partner }: PartnerCall): Webhook {
  const record = webhookOf(store, partner, param(request, "webhookId"));
  const body = parseInput(UpdateWebhookRequest, request.body, "body", profile.webhookValidationStatus);
  Object.assign(record, {
    name: body.name ?? record.name,
    url: body.url ?? record.url,
    events: body.events ? [...new Set(body.events)] : record.events,
    active: body.active ?? record.active,
    updatedAt: now(),
  });
  return view(record);
}

export function webhookRoutes(router: ApiRouter, ctx: Context): void {
  const { store, profile } = ctx;
  router.resource("POST", "/webhooks", (call) => createWebhook(ctx, call));

  router.resource("GET", "/webhooks/owner/:ownerId", ({ request, partner }) => {
    const query = parseInput(PageQuery, request.query, "query");
    const ownerId = param(request, "ownerId");
    const owned = [...store.webhooks.values()].filter(
      (webhook) => webhook.partnerId === partner.id && webhook.ownerId === ownerId,
    );
    // The description answers 404 "no webhooks exist for this owner" rather than an empty list.
    if (owned.length === 0 && profile.ownerWithoutWebhooks === "notFound") throw notFound("Webhook owner", ownerId);
    return conform(WebhookList, paginateAs(profile, "webhooks", owned.map(view), query));
  });

  router.resource("GET", "/webhooks/:webhookId", ({ request, partner }) =>
    view(webhookOf(store, partner, param(request, "webhookId"))),
  );

  router.resource("PUT", "/webhooks/:webhookId", (call) => updateWebhook(ctx, call));

  router.resource("DELETE", "/webhooks/:webhookId", ({ request, reply, partner }) => {
    const record = webhookOf(store, partner, param(request, "webhookId"));
    store.removeWebhook(record.objectId);
    reply.code(204);
  });

  router.resource("POST", "/webhooks/:webhookId/regenerate-secret", ({ request, partner }) => {
    const record = webhookOf(store, partner, param(request, "webhookId"));
    Object.assign(record, { secret: newSecret(), updatedAt: now() });
    return viewWithSecret(record);
  });

  router.resource("GET", "/webhooks/:webhookId/deliveries", ({ request, partner }) => {
    const record = webhookOf(store, partner, param(request, "webhookId"));
    const query = parseInput(PageQuery, request.query, "query");
    const deliveries = [...store.deliveries.values()].filter(
      (delivery) => delivery.webhookObjectId === record.objectId,
    );
    return conform(DeliveryList, paginateAs(profile, "deliveries", deliveries, query));
  });
}
