import {
  CreatedWebhook,
  type CreateWebhookRequest,
  Delivery,
  type UpdateWebhookRequest,
  Webhook,
  WebhookWithSecret,
} from "../../api";
import type { ReadBatcher } from "../batching/coalescing";
import { isNotFound } from "../errors";
import { rememberSecret } from "../redaction";
import type { Requester } from "../requester";
import { deleted, listArrayOrPages, segment, unlessNotFound } from "./common";
import { webhooksOf } from "./listScopes";

export class WebhookCalls {
  constructor(
    private readonly requester: Requester,
    private readonly reads: ReadBatcher,
  ) {}

  /**
   * The guides' create answer carries the secret, the description's does not:
   * without one, a new secret is asked for at once, the only way to learn it.
   */
  async createWebhook(body: CreateWebhookRequest): Promise<WebhookWithSecret> {
    const created = await this.reads.write([webhooksOf(body.ownerId)], () =>
      this.requester.call({
        operation: "create webhook",
        method: "POST",
        path: "/v1/webhooks",
        json: body,
        schema: CreatedWebhook,
        repeatable: false,
      }),
    );
    const { secret } = created;
    if (secret === undefined) return this.learnWebhook(await this.regenerateWebhookSecret(created.objectId));
    rememberSecret(secret);
    return this.learnWebhook({ ...created, secret });
  }

  /** From the owner's list of webhooks, shared by every webhook read of that owner on this client. */
  readWebhook(id: string, ownerId: string): Promise<Webhook | undefined> {
    return this.reads.find(webhooksOf(ownerId), id, this.webhookList(ownerId), () => this.getWebhook(id));
  }

  async getWebhook(id: string): Promise<Webhook | undefined> {
    const found = await unlessNotFound(
      this.requester.call({
        operation: "read webhook",
        method: "GET",
        path: `/v1/webhooks/${segment(id)}`,
        schema: Webhook,
        repeatable: true,
      }),
    );
    return found && this.learnWebhook(found);
  }

  listWebhooks(ownerId: string): Promise<Webhook[]> {
    return this.webhookList(ownerId).fetch();
  }

  /** {@link listWebhooks}, shared by every webhook read of the owner on this client. */
  readWebhooks(ownerId: string): Promise<Webhook[]> {
    return this.reads.list(webhooksOf(ownerId), this.webhookList(ownerId));
  }

  private webhookList(ownerId: string) {
    const keyOf = (webhook: Webhook) => webhook.objectId;
    return {
      fetch: async () => {
        // The description answers 404 for an owner without webhooks, the guides an empty list.
        const list = await listArrayOrPages(
          this.requester,
          "list webhooks",
          `/v1/webhooks/owner/${segment(ownerId)}`,
          Webhook,
          keyOf,
        ).catch((error: unknown) => {
          if (isNotFound(error)) return [];
          throw error;
        });
        return list.map((webhook) => this.learnWebhook(webhook));
      },
      keyOf,
    };
  }

  private learnWebhook<T extends Webhook>(webhook: T): T {
    this.reads.learnOwner("webhooks", webhook.objectId, webhook.ownerId);
    return webhook;
  }

  updateWebhook(id: string, body: UpdateWebhookRequest): Promise<Webhook> {
    return this.reads.write([this.reads.scopeOf("webhooks", id)], () =>
      this.requester.call({
        operation: "update webhook",
        method: "PUT",
        path: `/v1/webhooks/${segment(id)}`,
        json: body,
        schema: Webhook,
        repeatable: true,
      }),
    );
  }

  deleteWebhook(id: string): Promise<boolean> {
    return this.reads.write([this.reads.scopeOf("webhooks", id)], () =>
      deleted(
        this.requester.call({
          operation: "delete webhook",
          method: "DELETE",
          path: `/v1/webhooks/${segment(id)}`,
          repeatable: true,
        }),
      ),
    );
  }

  async regenerateWebhookSecret(id: string): Promise<WebhookWithSecret> {
    const webhook = await this.reads.write([this.reads.scopeOf("webhooks", id)], () =>
      this.requester.call({
        operation: "regenerate webhook secret",
        method: "POST",
        path: `/v1/webhooks/${segment(id)}/regenerate-secret`,
        schema: WebhookWithSecret,
        // Sending it again only regenerates again, and the answer that arrives carries the secret in force.
        repeatable: true,
      }),
    );
    rememberSecret(webhook.secret);
    return webhook;
  }

  listDeliveries(id: string): Promise<Delivery[]> {
    return listArrayOrPages(
      this.requester,
      "list webhook deliveries",
      `/v1/webhooks/${segment(id)}/deliveries`,
      Delivery,
      // Deliveries carry no id of their own.
      (delivery) => JSON.stringify([delivery.eventName, delivery.createdAt, delivery.payload]),
    );
  }
}
