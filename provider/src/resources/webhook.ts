import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { WebhookEvents, WebhookName, type Webhook as WebhookRecord, WebhookUrl, type WebhookWithSecret } from "../api";
import type { DmarcClient } from "../client";
import { createOrAdopt } from "../runtime/adopt";
import type { ResourceDefinition } from "../runtime/lifecycle";
import { type AdoptableArgs, DmarcResource } from "../runtime/resource";

export const WebhookInputs = z.object({
  name: WebhookName,
  url: WebhookUrl,
  events: WebhookEvents,
  active: z.boolean().default(true),
  /** Owner echoed in event metadata; defaults to the provider's `dmarc:partnerId`. */
  ownerId: z.string().min(1, { message: "must be set, or set dmarc:partnerId" }),
  /** Bump to rotate the signing secret (regenerate-secret). */
  secretVersion: z.number().int().nonnegative().default(0),
});
export type WebhookInputs = z.infer<typeof WebhookInputs>;

export interface WebhookOutputs extends WebhookInputs {
  webhookId: string;
  /** Signing secret; a Pulumi secret. Empty after an import until the next rotation. */
  secret: string;
}

function outputsFor(inputs: WebhookInputs, record: WebhookRecord, secret: string): WebhookOutputs {
  return {
    ...inputs,
    name: record.name,
    url: record.url,
    events: record.events as WebhookInputs["events"],
    active: record.active,
    ownerId: record.ownerId,
    webhookId: record.objectId,
    secret,
  };
}

async function adoptLostCreate(client: DmarcClient, inputs: WebhookInputs): Promise<WebhookWithSecret | undefined> {
  const found = (await client.listWebhooks(inputs.ownerId)).find(
    (hook) => hook.name === inputs.name && hook.url === inputs.url,
  );
  // The lost answer carried the only copy of the secret: a fresh one is issued for the adopted webhook.
  return found ? client.regenerateWebhookSecret(found.objectId) : undefined;
}

export const webhook: ResourceDefinition<WebhookInputs, WebhookOutputs> = {
  typeName: "Webhook",
  inputs: WebhookInputs,
  replaceOn: ["ownerId"],

  withDefaults(declared, settings) {
    return declared.ownerId === undefined && settings.partnerId
      ? { ...declared, ownerId: settings.partnerId }
      : declared;
  },

  async create({ client }, inputs) {
    const { secretVersion: _rotation, ...body } = inputs;
    const created = await createOrAdopt(
      client,
      () => client.createWebhook(body),
      () => adoptLostCreate(client, inputs),
    );
    return { id: created.objectId, outs: outputsFor(inputs, created, created.secret) };
  },

  async read({ client }, id, props) {
    const found = await client.getWebhook(id);
    if (!found) return undefined;
    const inputs: WebhookInputs = {
      name: found.name,
      url: found.url,
      events: found.events as WebhookInputs["events"],
      active: found.active,
      ownerId: found.ownerId,
      secretVersion: props?.secretVersion ?? 0,
    };
    return { outs: outputsFor(inputs, found, props?.secret ?? "") };
  },

  async update({ client }, id, olds, news) {
    const changed = {
      ...(olds.name !== news.name ? { name: news.name } : {}),
      ...(olds.url !== news.url ? { url: news.url } : {}),
      ...(JSON.stringify(olds.events) !== JSON.stringify(news.events) ? { events: news.events } : {}),
      ...(olds.active !== news.active ? { active: news.active } : {}),
    };
    let record: WebhookRecord | undefined;
    if (Object.keys(changed).length > 0) record = await client.updateWebhook(id, changed);
    let secret = olds.secret;
    if (olds.secretVersion !== news.secretVersion) {
      const rotated = await client.regenerateWebhookSecret(id);
      record = rotated;
      secret = rotated.secret;
    }
    record ??= await client.getWebhook(id);
    if (!record) throw new Error(`Webhook ${id} is gone; run pulumi refresh`);
    return outputsFor(news, record, secret);
  },

  async delete({ client }, id) {
    await client.deleteWebhook(id);
  },
};

export interface WebhookArgs extends AdoptableArgs {
  /** Label. Updates in place. */
  name: pulumi.Input<string>;
  /** Receiver endpoint: https, or http for loopback hosts only. Updates in place. */
  url: pulumi.Input<string>;
  /** Subscribed events: `domain.created`, `domain.verified`, `report.received`. Updates in place. */
  events: pulumi.Input<pulumi.Input<"domain.created" | "domain.verified" | "report.received">[]>;
  /** Whether deliveries are made (default true). Updates in place. */
  active?: pulumi.Input<boolean>;
  /** Owner identifier echoed in event metadata; defaults to `dmarc:partnerId`. A different owner replaces. */
  ownerId?: pulumi.Input<string>;
  /** Change (e.g. increment) to rotate the signing secret. */
  secretVersion?: pulumi.Input<number>;
}

/** A webhook receiving the service's events. `secret` verifies their signatures and is kept as a Pulumi secret. */
export class Webhook extends DmarcResource {
  declare readonly name: pulumi.Output<string>;
  declare readonly url: pulumi.Output<string>;
  declare readonly events: pulumi.Output<string[]>;
  declare readonly active: pulumi.Output<boolean>;
  declare readonly ownerId: pulumi.Output<string>;
  declare readonly secretVersion: pulumi.Output<number>;
  /** The service's `objectId`: the resource id, known while an update is previewed. */
  readonly webhookId: pulumi.Output<string>;
  declare readonly secret: pulumi.Output<string>;

  constructor(name: string, args: WebhookArgs, opts?: pulumi.CustomResourceOptions) {
    super("Webhook", name, { ...args, secret: undefined }, opts, ["secret"]);
    this.webhookId = this.id;
  }
}
