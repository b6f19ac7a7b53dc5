import { z } from "zod";
import { listOf, Timestamp } from "./common";
import { WebhookUrl } from "./validation";

export const EVENT_NAMES = ["domain.created", "domain.verified", "report.received"] as const;
export const EventName = z.enum(EVENT_NAMES);
export type EventName = z.infer<typeof EventName>;

/** At most this many webhooks per owner (facts page, section 5). */
export const MAX_WEBHOOKS_PER_OWNER = 5;

export const WEBHOOK_NAME_MAX = 128;
export const WebhookName = z
  .string()
  .min(1, { message: "must not be empty" })
  .max(WEBHOOK_NAME_MAX, { message: `must be at most ${WEBHOOK_NAME_MAX} characters` });

export const WebhookEvents = z.array(EventName).min(1, { message: "must list at least one event" });

export const CreateWebhookRequest = z.object({
  name: WebhookName,
  ownerId: z.string().min(1),
  url: WebhookUrl,
  events: WebhookEvents,
  active: z.boolean().optional(),
});
export type CreateWebhookRequest = z.infer<typeof CreateWebhookRequest>;

export const UpdateWebhookRequest = z.object({
  name: WebhookName.optional(),
  url: WebhookUrl.optional(),
  events: WebhookEvents.optional(),
  active: z.boolean().optional(),
});
export type UpdateWebhookRequest = z.infer<typeof UpdateWebhookRequest>;

export const Webhook = z.object({
  objectId: z.string().min(1),
  name: z.string(),
  ownerId: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  active: z.boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Webhook = z.infer<typeof Webhook>;

/** Create and regenerate-secret answers: the only answers that carry the secret. */
export const WebhookWithSecret = Webhook.extend({ secret: z.string().min(1) });
export type WebhookWithSecret = z.infer<typeof WebhookWithSecret>;

/**
 * The create answer: the guides say it carries the secret, the description's
 * schema is the plain Webhook. Without one, the client asks for a new secret.
 */
export const CreatedWebhook = Webhook.extend({ secret: z.string().min(1).optional() });
export type CreatedWebhook = z.infer<typeof CreatedWebhook>;

/** `GET /v1/webhooks/owner/{ownerId}` answers either a plain array or a list envelope. */
export const WebhookList = z.union([z.array(Webhook), listOf(Webhook)]);

export const DeliveryStatus = z.enum(["pending", "success", "failed"]);

/** The description types `webhookObjectId` and `nextRetryAt` as numbers, the guides as text: both are read. */
export const Delivery = z.object({
  webhookObjectId: z.union([z.string(), z.number()]).transform(String),
  eventName: z.string(),
  payload: z.unknown(),
  attempts: z.number().int().nonnegative(),
  maxAttempts: z.number().int().positive(),
  nextRetryAt: z.union([Timestamp, z.number()]).nullable().optional(),
  status: DeliveryStatus,
  statusCode: z.number().int().nullable().optional(),
  error: z.string().nullable().optional(),
  deliveredAt: Timestamp.nullable().optional(),
  createdAt: Timestamp,
});
export type Delivery = z.infer<typeof Delivery>;

export const DeliveryList = z.union([z.array(Delivery), listOf(Delivery)]);
