import { z } from "zod";
import { WebhookEvents, WebhookName, type Webhook as WebhookRecord, WebhookUrl, type WebhookWithSecret } from "../api";
import type { DmarcClient } from "../client";
import { type CreateCandidate, defineResource, updateMayChange } from "../runtime/lifecycle";
import { resourceClass } from "../runtime/resource";
import { madeSince, settleCall } from "../runtime/settle";
import { displayName, serviceId } from "./fields";

const WebhookInputs = z.object({
  name: displayName(WebhookName).describe("Label of the webhook."),
  url: WebhookUrl.describe("Receiver endpoint: https, or http for loopback hosts only."),
  events: WebhookEvents.describe("The events delivered to the endpoint."),
  active: z.boolean().describe("Whether deliveries are made.").default(true),
  ownerId: serviceId("an owner id: the partner id or an organisation id (or set dmarc:partnerId)", "org_2f8a").describe(
    "Owner echoed in event metadata: the partner id, or an organisation id for an organisation's own webhook.",
  ),
  secretVersion: z
    .number()
    .int()
    .nonnegative()
    .describe("Change it (e.g. increment it) to rotate the signing secret.")
    .default(0),
});
type WebhookInputs = z.output<typeof WebhookInputs>;

const WebhookOutputs = z.object({
  secret: z.string().describe("Signing secret of the deliveries. Empty after an import until the next rotation."),
});
type WebhookProps = WebhookInputs & z.output<typeof WebhookOutputs>;

function propsOf(inputs: WebhookInputs, record: WebhookRecord, secret: string): WebhookProps {
  return {
    ...inputs,
    name: record.name,
    url: record.url,
    // Answers tolerate event names this package does not know yet.
    events: record.events as WebhookInputs["events"],
    active: record.active,
    ownerId: record.ownerId,
    secret,
  };
}

/** Every webhook of the owner with this name and endpoint (an owner has at most five). */
async function webhooksLike(client: DmarcClient, inputs: WebhookInputs): Promise<CreateCandidate[]> {
  return (await client.listWebhooks(inputs.ownerId))
    .filter((hook) => hook.name === inputs.name && hook.url === inputs.url)
    .map((hook) => ({ id: hook.objectId, label: `${hook.name} -> ${hook.url}`, createdAt: hook.createdAt }));
}

async function settleLostCreate(
  client: DmarcClient,
  inputs: WebhookInputs,
  startedAt: number,
): Promise<WebhookWithSecret | undefined> {
  const made = madeSince(await webhooksLike(client, inputs), startedAt, `Webhook "${inputs.name}"`);
  // The lost answer carried the only copy of the secret: a fresh one is issued for the webhook found.
  return made ? client.regenerateWebhookSecret(made.id) : undefined;
}

/** A new `secretVersion` has the service issue a new secret: the one way an update changes it. */
const rotates = { changedBy: ["secretVersion"] } as const;

export const webhook = defineResource({
  typeName: "Webhook",
  description:
    "A webhook receiving the service's events, owned by the partner or by one organisation. `secret` verifies the deliveries' signatures.",
  idFormat: "<objectId>",
  inputs: WebhookInputs,
  outputs: WebhookOutputs,
  secretOutputs: ["secret"],
  idOutputs: {
    webhookId: { description: "The service's `objectId` of the webhook: the resource id.", fromId: (id) => id },
  },
  updatedBy: { secret: rotates },
  replaceOn: ["ownerId"],

  fromSettings: { ownerId: "partnerId" },

  ownership: "madeDuringRun",
  lookUp: ({ client }, inputs) => webhooksLike(client, inputs),

  async create({ client }, inputs) {
    const { secretVersion: _rotation, ...body } = inputs;
    const startedAt = Date.now();
    const created = await settleCall(
      client,
      () => client.createWebhook(body),
      () => settleLostCreate(client, inputs, startedAt),
    );
    return { id: created.objectId, outs: propsOf(inputs, created, created.secret) };
  },

  async read({ client }, id, props) {
    // The owner's list answers every webhook of that owner; on import the declared owner names it.
    const found = props?.ownerId ? await client.readWebhook(id, props.ownerId) : await client.getWebhook(id);
    if (!found) return undefined;
    const inputs: WebhookInputs = {
      name: found.name,
      url: found.url,
      events: found.events as WebhookInputs["events"],
      active: found.active,
      ownerId: found.ownerId,
      secretVersion: props?.secretVersion ?? 0,
    };
    return propsOf(inputs, found, props?.secret ?? "");
  },

  async update({ client }, id, olds, news, changed) {
    const patch = Object.fromEntries(
      (["name", "url", "events", "active"] as const).filter((key) => changed.has(key)).map((key) => [key, news[key]]),
    );
    let record: WebhookRecord | undefined;
    if (Object.keys(patch).length > 0) record = await client.updateWebhook(id, patch);
    let secret = olds.secret;
    if (updateMayChange(rotates, olds, changed)) {
      const rotated = await client.regenerateWebhookSecret(id);
      record = rotated;
      secret = rotated.secret;
    }
    record ??= await client.getWebhook(id);
    if (!record) throw new Error(`Webhook ${id} is gone; run pulumi refresh`);
    return propsOf(news, record, secret);
  },

  async delete({ client }, id) {
    await client.deleteWebhook(id);
  },
});

/** The Webhook resource; its inputs, outputs and id: docs/resources/webhook.md. */
export const Webhook = resourceClass(webhook);
export type Webhook = InstanceType<typeof Webhook>;
export type WebhookArgs = ConstructorParameters<typeof Webhook>[1];
