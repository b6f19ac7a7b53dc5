// Webhook receiver kit: verify, deduplicate and parse the service's Standard Webhooks
// deliveries, either inside a partner's own server or as a ready-made node:http server.
export type { DomainCreatedEvent, DomainVerifiedEvent, EventName, ReportReceivedEvent, WebhookEvent } from "../api";
export { type EventOf, isEvent } from "./guards";
export type { HeaderSource } from "./headers";
export { createRequestListener, type ListenerOptions, type RequestListener } from "./listener";
export {
  type Accepted,
  createWebhookReceiver,
  type DeliveryContext,
  type Duplicate,
  type EventHandler,
  type Failed,
  type ReceiveResult,
  type ReceiverOptions,
  type WebhookReceiver,
} from "./receiver";
export type { Rejected, RejectionReason } from "./rejections";
export { createReceiverServer, type ReceiverServer, type ReceiverServerOptions } from "./server";
export {
  type ClaimResult,
  type DeliveryStore,
  MemoryDeliveryStore,
  type MemoryDeliveryStoreOptions,
} from "./store";
export {
  createWebhookVerifier,
  type VerificationResult,
  type Verified,
  type VerifierOptions,
  type WebhookDelivery,
  type WebhookVerifier,
} from "./verifier";
