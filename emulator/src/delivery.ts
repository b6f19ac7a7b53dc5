import type { Logger } from "pino";
import {
  type DomainCreatedEvent,
  type DomainVerifiedEvent,
  type EventName,
  type ReportReceivedEvent,
  WebhookEvent,
} from "pulumi-dmarc-partner/api";
import { Webhook } from "standardwebhooks";
import { newId } from "./ids";
import type { DeliveryRecord, Store, WebhookRecord } from "./store";

/** Delay before each attempt (facts page, section 6 [choice]), multiplied by `retryScale`. */
const RETRY_SCHEDULE_MS = [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];

// setTimeout fires at once for longer delays, so a large retryScale is clamped here.
const MAX_TIMER_MS = 2 ** 31 - 1;

export type EventInput =
  | { eventName: "domain.created"; data: DomainCreatedEvent["data"] }
  | { eventName: "domain.verified"; data: DomainVerifiedEvent["data"] }
  | { eventName: "report.received"; data: ReportReceivedEvent["data"] };

export interface DispatcherOptions {
  timeoutMs: number;
  retryScale: number;
  log: Logger;
}

/** An event concerns one organisation; a webhook hears it when owned by that organisation or by the whole partner. */
/** What one attempt got back: the receiver's status, if it answered, and what went wrong, if anything. */
interface AttemptOutcome {
  statusCode: number | null;
  error: string | null;
}

function hears(webhook: WebhookRecord, partnerId: string, organizationId: string, eventName: EventName): boolean {
  return (
    webhook.partnerId === partnerId &&
    webhook.active &&
    webhook.events.includes(eventName) &&
    (webhook.ownerId === partnerId || webhook.ownerId === organizationId)
  );
}

/** Signs and delivers events to webhooks, retrying on the schedule and recording every attempt. */
export class Dispatcher {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly shutdown = new AbortController();

  constructor(
    private readonly store: Store,
    private readonly options: DispatcherOptions,
  ) {}

  emit(partnerId: string, organizationId: string, event: EventInput): void {
    const now = new Date();
    for (const webhook of this.store.webhooks.values()) {
      if (!hears(webhook, partnerId, organizationId, event.eventName)) continue;
      const payload = WebhookEvent.parse({
        data: event.data,
        metadata: { eventName: event.eventName, ownerId: webhook.ownerId },
      });
      const delivery: DeliveryRecord = {
        id: newId("msg"),
        webhookObjectId: webhook.objectId,
        eventName: event.eventName,
        payload,
        attempts: 0,
        maxAttempts: RETRY_SCHEDULE_MS.length,
        nextRetryAt: now.toISOString(),
        status: "pending",
        statusCode: null,
        error: null,
        deliveredAt: null,
        createdAt: now.toISOString(),
        history: [],
      };
      this.store.deliveries.set(delivery.id, delivery);
      this.schedule(delivery, 0);
    }
    this.store.changed();
  }

  /** Picks up deliveries left pending by a previous run (persisted state). */
  resume(): void {
    const now = Date.now();
    for (const delivery of this.store.deliveries.values()) {
      if (delivery.status !== "pending") continue;
      const due = delivery.nextRetryAt ? Date.parse(delivery.nextRetryAt) : now;
      this.schedule(delivery, Math.max(0, due - now));
    }
  }

  /** Forgets scheduled attempts (the deliveries themselves live in the store). */
  cancelAll(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  close(): void {
    this.shutdown.abort();
    this.cancelAll();
  }

  private schedule(delivery: DeliveryRecord, delayMs: number): void {
    const timer = setTimeout(
      () => {
        this.timers.delete(delivery.id);
        void this.attempt(delivery);
      },
      Math.min(delayMs, MAX_TIMER_MS),
    );
    this.timers.set(delivery.id, timer);
  }

  private async attempt(delivery: DeliveryRecord): Promise<void> {
    const webhook = this.store.webhooks.get(delivery.webhookObjectId);
    if (!webhook || this.store.deliveries.get(delivery.id) !== delivery) return;
    if (!webhook.active) {
      this.finish(delivery, "failed", "the webhook was deactivated");
      return;
    }
    const sentAt = new Date();
    const started = performance.now();
    const outcome = await this.post(webhook, delivery, sentAt);
    // Shutting down: the delivery stays pending and resumes after a restart.
    if (outcome === undefined) return;
    // The state was reset or the webhook deleted while the request was in flight.
    if (this.store.deliveries.get(delivery.id) !== delivery) return;
    this.recordAttempt(delivery, outcome, sentAt, started);
  }

  /** Sends the delivery once, signed; undefined when the emulator shuts down meanwhile. */
  private async post(
    webhook: WebhookRecord,
    delivery: DeliveryRecord,
    sentAt: Date,
  ): Promise<AttemptOutcome | undefined> {
    const body = JSON.stringify(delivery.payload);
    let statusCode: number | null = null;
    let error: string | null = null;
    try {
      const response = await fetch(webhook.url, {
        method: "POST",
        redirect: "manual",
        headers: {
          "content-type": "application/json",
          "user-agent": "dmarc-partner-emulator",
          "webhook-id": delivery.id,
          "webhook-timestamp": String(Math.floor(sentAt.getTime() / 1000)),
          "webhook-signature": new Webhook(webhook.secret).sign(delivery.id, sentAt, body),
        },
        body,
        signal: AbortSignal.any([AbortSignal.timeout(this.options.timeoutMs), this.shutdown.signal]),
      });
      statusCode = response.status;
      await response.body?.cancel();
      if (statusCode < 200 || statusCode > 299) error = `the receiver answered ${statusCode}`;
    } catch (cause) {
      if (this.shutdown.signal.aborted) return undefined;
      const timedOut = (cause as Error).name === "TimeoutError";
      error = timedOut ? `no answer within ${this.options.timeoutMs} ms` : describe(cause);
    }
    return { statusCode, error };
  }

  /** Adds the attempt to the delivery's history, then finishes it or schedules the next try. */
  private recordAttempt(delivery: DeliveryRecord, outcome: AttemptOutcome, sentAt: Date, started: number): void {
    const { statusCode, error } = outcome;
    delivery.attempts += 1;
    delivery.statusCode = statusCode;
    delivery.history.push({
      attempt: delivery.attempts,
      at: sentAt.toISOString(),
      statusCode,
      error,
      durationMs: Math.round(performance.now() - started),
    });
    if (error === null) {
      delivery.deliveredAt = new Date().toISOString();
      this.finish(delivery, "success", null);
    } else if (delivery.attempts >= delivery.maxAttempts) {
      this.finish(delivery, "failed", error);
    } else {
      const delayMs = (RETRY_SCHEDULE_MS[delivery.attempts] ?? 0) * this.options.retryScale;
      delivery.error = error;
      delivery.nextRetryAt = new Date(Date.now() + delayMs).toISOString();
      this.options.log.debug({ deliveryId: delivery.id, error, delayMs }, "webhook delivery failed; retrying");
      this.schedule(delivery, delayMs);
      this.store.changed();
    }
  }

  private finish(delivery: DeliveryRecord, status: "success" | "failed", error: string | null): void {
    delivery.status = status;
    delivery.error = error;
    delivery.nextRetryAt = null;
    this.options.log.debug({ deliveryId: delivery.id, status, error }, "webhook delivery finished");
    this.store.changed();
  }
}

function describe(cause: unknown): string {
  const error = cause as Error & { cause?: { code?: string; message?: string } };
  return error.cause?.code ?? error.cause?.message ?? error.message;
}
