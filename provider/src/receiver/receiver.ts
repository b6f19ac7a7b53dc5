import type { ErrorEnvelope, WebhookEvent } from "../api";
import { type Rejected, reject } from "./rejections";
import { type DeliveryStore, MemoryDeliveryStore } from "./store";
import { createWebhookVerifier, type VerifierOptions, type WebhookDelivery } from "./verifier";

/** What the handler learns about a delivery besides the event. */
export interface DeliveryContext {
  /** The sender's message id, the same on every retry: use it as an idempotency key downstream. */
  webhookId: string;
  /** When the sender signed this attempt. */
  timestamp: Date;
}

/**
 * Called once per webhook-id. Resolve to acknowledge; throw to have the sender retry.
 * The service expects an answer within about 3 seconds, so hand slow work to a queue.
 */
export type EventHandler = (event: WebhookEvent, context: DeliveryContext) => void | Promise<void>;

export interface ReceiverOptions extends VerifierOptions {
  onEvent: EventHandler;
  /**
   * Where processed webhook-ids are remembered.
   * @defaultValue a new {@link MemoryDeliveryStore} with its defaults (48 hours, 10000 ids)
   */
  store?: DeliveryStore;
}

/** First delivery of a message, verified and handled. Answer 204. */
export interface Accepted extends DeliveryContext {
  outcome: "accepted";
  status: 204;
  event: WebhookEvent;
}

/** A verified delivery of a message already handled. Answer 2xx so the sender stops retrying. */
export interface Duplicate extends DeliveryContext {
  outcome: "duplicate";
  status: 200;
  body: { duplicate: true };
}

/** A verified delivery whose handler threw. The id is released, so the sender's retry runs the handler again. */
export interface Failed extends DeliveryContext {
  outcome: "failed";
  status: 500;
  /** What the handler threw, for the caller's own logging. Not part of the answer. */
  error: unknown;
  body: ErrorEnvelope;
}

export type ReceiveResult = Accepted | Duplicate | Rejected | Failed;

export interface WebhookReceiver {
  /** Verifies a delivery, runs the handler at most once per webhook-id, and says what to answer. Rejects only when the store fails. */
  receive(delivery: WebhookDelivery): Promise<ReceiveResult>;
  /** The size limit in force, so a transport can stop reading early. */
  readonly maxBodyBytes: number;
}

export function createWebhookReceiver(options: ReceiverOptions): WebhookReceiver {
  const verifier = createWebhookVerifier(options);
  const store = options.store ?? new MemoryDeliveryStore();
  const { onEvent } = options;

  async function receive(delivery: WebhookDelivery): Promise<ReceiveResult> {
    const verified = verifier.verify(delivery);
    if (verified.outcome === "rejected") return verified;
    const { event, webhookId, timestamp } = verified;
    const context = { webhookId, timestamp };

    const claim = await store.claim(webhookId);
    if (claim === "done") return { outcome: "duplicate", status: 200, body: { duplicate: true }, ...context };
    if (claim === "processing") return reject("in_progress");

    try {
      await onEvent(event, context);
    } catch (error) {
      await store.release(webhookId);
      return {
        outcome: "failed",
        status: 500,
        error,
        body: { error: "handler_failed", message: "the receiver could not process the event; retry later" },
        ...context,
      };
    }
    await store.complete(webhookId);
    return { outcome: "accepted", status: 204, event, ...context };
  }

  return { receive, maxBodyBytes: verifier.maxBodyBytes };
}
