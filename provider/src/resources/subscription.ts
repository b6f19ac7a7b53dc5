import { z } from "zod";
import type { Subscription as SubscriptionRecord } from "../api";
import { DmarcApiError, type DmarcClient, isNotFound } from "../client";
import { joinId, splitId } from "../runtime/ids";
import { type CreateCandidate, defineResource, type OutputChange } from "../runtime/lifecycle";
import { resourceClass } from "../runtime/resource";
import { finishCreate, madeSince, settleAction, settleCall } from "../runtime/settle";
import { OrganizationId, serviceId } from "./fields";

/** Renewals one operation may make to reach `keepActiveUntil`: ten years of monthly terms. */
const MAX_RENEWALS = 120;

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2}))?$/;

const SubscriptionInputs = z.object({
  organizationId: OrganizationId.describe("The organisation subscribed."),
  priceId: serviceId("a price id of the partner's catalogue (see getPriceId)", "price_business_m").describe(
    "Price of the partner's catalogue (see `getPriceId`). A change moves the subscription to the new price in place.",
  ),
  keepActiveUntil: z
    .string()
    .refine((value) => ISO_DATE.test(value) && !Number.isNaN(Date.parse(value)), {
      message: "must be an ISO 8601 date or date-time such as 2027-12-31 or 2027-12-31T00:00:00Z",
    })
    .optional()
    .describe(
      `Keep the subscription active until this date (ISO 8601): renewed while it expires before it, at most ${MAX_RENEWALS} terms in one operation.`,
    ),
  suspended: z
    .boolean()
    .optional()
    .describe(
      "Keep the subscription cancelled (the organisation suspended): adopt a cancelled subscription (`importId`) without renewing it. Set on an active subscription, the next `up` cancels it; removed, the next `up` renews it by a new assignment.",
    ),
});
type SubscriptionInputs = z.output<typeof SubscriptionInputs>;

const SubscriptionStatus = z.enum(["active", "suspended", "expired"]);
export type SubscriptionStatus = z.infer<typeof SubscriptionStatus>;

const SubscriptionOutputs = z.object({
  subscriptionId: z
    .string()
    .describe("The service's id of the current subscription; a price change moves it to a new id."),
  status: SubscriptionStatus.describe(
    "Where the subscription stands: `suspended` once cancelled, `expired` once its term ended.",
  ),
  expireDate: z.string().describe("When the current term ends (ISO 8601)."),
  cancelledAt: z.string().nullable().describe("When the subscription was cancelled (ISO 8601), or null."),
});
type SubscriptionProps = SubscriptionInputs & z.output<typeof SubscriptionOutputs>;

export function statusOf(record: SubscriptionRecord, now = Date.now()): SubscriptionStatus {
  if (record.cancelledAt !== null) return "suspended";
  return Date.parse(record.expireDate) <= now ? "expired" : "active";
}

function outputsFor(inputs: SubscriptionInputs, record: SubscriptionRecord): SubscriptionProps {
  return {
    ...inputs,
    priceId: record.items[0]?.priceId ?? inputs.priceId,
    subscriptionId: record.id,
    status: statusOf(record),
    expireDate: record.expireDate,
    cancelledAt: record.cancelledAt,
  };
}

/**
 * The organisation's subscriptions, one list shared by every read of the
 * organisation in this process; undefined when the organisation itself is gone.
 */
async function subscriptionsOf(client: DmarcClient, organizationId: string): Promise<SubscriptionRecord[] | undefined> {
  try {
    return await client.readSubscriptions(organizationId);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

async function findSubscription(
  client: DmarcClient,
  organizationId: string,
  subscriptionId: string,
): Promise<SubscriptionRecord | undefined> {
  return (await subscriptionsOf(client, organizationId))?.find((candidate) => candidate.id === subscriptionId);
}

/**
 * Renews until the subscription outlives `keepActiveUntil` (or is simply not
 * expired). A renewal whose answer is lost is settled by reading the
 * subscription again, so a term is never added twice by mistake.
 */
async function renewAsDeclared(
  client: DmarcClient,
  organizationId: string,
  record: SubscriptionRecord,
  keepActiveUntil: string | undefined,
): Promise<SubscriptionRecord> {
  const target = keepActiveUntil ? Date.parse(keepActiveUntil) : Date.now();
  let current = record;
  for (let renewals = 0; Date.parse(current.expireDate) <= target; renewals++) {
    if (renewals >= MAX_RENEWALS) {
      throw new Error(
        `Subscription ${current.id}: still expiring on ${current.expireDate} after ${MAX_RENEWALS} renewals; keepActiveUntil ${keepActiveUntil} is too far ahead`,
      );
    }
    const subscriptionId = current.id;
    const expiring = Date.parse(current.expireDate);
    current = await settleCall(
      client,
      () => client.renewSubscription(subscriptionId),
      async () => {
        // Only a term that was added counts as the renewal's doing; otherwise it did nothing.
        const found = await findSubscription(client, organizationId, subscriptionId);
        return found && Date.parse(found.expireDate) > expiring ? found : undefined;
      },
    );
  }
  return current;
}

/**
 * Cancels a subscription of the organisation. A second cancel is refused once
 * the first took effect, so an unanswered cancel is settled by reading the
 * subscription back: cancelled (or gone with its organisation) means done.
 */
async function cancelSubscription(client: DmarcClient, organizationId: string, subscriptionId: string): Promise<void> {
  await settleAction(
    client,
    () => client.cancelSubscription(subscriptionId),
    async () => {
      const found = await findSubscription(client, organizationId, subscriptionId);
      return found === undefined || found.cancelledAt !== null;
    },
  );
}

/**
 * Cancels every subscription of the organisation that is not cancelled yet;
 * the service refuses to delete it otherwise. False when the organisation is gone.
 */
export async function cancelActiveSubscriptions(client: DmarcClient, organizationId: string): Promise<boolean> {
  const subscriptions = await subscriptionsOf(client, organizationId);
  if (subscriptions === undefined) return false;
  for (const subscription of subscriptions) {
    if (subscription.cancelledAt === null) await cancelSubscription(client, organizationId, subscription.id);
  }
  return true;
}

/** The organisation's active subscriptions to the price: at most one, as the service keeps one active at a time. */
async function activeAtPrice(client: DmarcClient, inputs: SubscriptionInputs): Promise<SubscriptionRecord[]> {
  return ((await subscriptionsOf(client, inputs.organizationId)) ?? []).filter(
    (candidate) => candidate.cancelledAt === null && candidate.items.some((item) => item.priceId === inputs.priceId),
  );
}

function candidateOf(inputs: SubscriptionInputs, record: SubscriptionRecord): CreateCandidate {
  return {
    id: joinId(inputs.organizationId, record.id),
    label: `${record.id} at ${inputs.priceId}`,
    createdAt: record.createdAt,
  };
}

/** The subscription an assignment sent at `startedAt` made, when its answer was lost: one made since then. */
async function assignedSince(
  client: DmarcClient,
  inputs: SubscriptionInputs,
  startedAt: number,
): Promise<SubscriptionRecord | undefined> {
  const records = await activeAtPrice(client, inputs);
  const made = madeSince(
    records.map((record) => candidateOf(inputs, record)),
    startedAt,
    `Subscription of ${inputs.organizationId}`,
  );
  return made && records.find((record) => candidateOf(inputs, record).id === made.id);
}

/** Moves a subscription to the declared price; the service answers with the one now in force. */
function changePrice(client: DmarcClient, inputs: SubscriptionInputs, subscriptionId: string) {
  return settleCall(
    client,
    () => client.changeSubscriptionPrice(subscriptionId, inputs.priceId),
    async () => (await activeAtPrice(client, inputs))[0],
  );
}

/**
 * The service refuses (409) a second active subscription. The organisation's
 * active one becomes the declared one: kept when it has the declared price,
 * moved to it otherwise.
 */
async function takeOverActive(
  client: DmarcClient,
  inputs: SubscriptionInputs,
  refusal: DmarcApiError,
): Promise<SubscriptionRecord> {
  const active = (await subscriptionsOf(client, inputs.organizationId))?.find(
    (candidate) => candidate.cancelledAt === null,
  );
  if (!active) throw refusal;
  if (active.items.some((item) => item.priceId === inputs.priceId)) return active;
  return changePrice(client, inputs, active.id);
}

/** Assigns the declared price; renewing it as declared is up to the caller. */
async function assign(client: DmarcClient, inputs: SubscriptionInputs): Promise<SubscriptionRecord> {
  const startedAt = Date.now();
  try {
    return await settleCall(
      client,
      () => client.assignSubscription({ organizationId: inputs.organizationId, priceId: inputs.priceId }),
      () => assignedSince(client, inputs, startedAt),
    );
  } catch (error) {
    if (error instanceof DmarcApiError && error.status === 409) return takeOverActive(client, inputs, error);
    throw error;
  }
}

/**
 * The subscription cancelled, as declared: cancelled now when it is active.
 * A cancelled subscription keeps its price, so a new price is refused.
 */
async function keepCancelled(
  client: DmarcClient,
  olds: SubscriptionProps,
  news: SubscriptionInputs,
): Promise<SubscriptionRecord> {
  const subscriptionId = olds.subscriptionId;
  const record = await findSubscription(client, olds.organizationId, subscriptionId);
  if (!record) throw new Error(`Subscription ${subscriptionId}: it is gone, so it cannot be kept cancelled`);
  const priceId = record.items[0]?.priceId;
  if (priceId !== undefined && priceId !== news.priceId) {
    throw new Error(
      `Subscription ${subscriptionId}: a cancelled subscription keeps its price ${priceId}; renew it (no longer suspended) to move it to ${news.priceId}`,
    );
  }
  if (record.cancelledAt !== null) return record;
  await cancelSubscription(client, olds.organizationId, subscriptionId);
  return (await findSubscription(client, olds.organizationId, subscriptionId)) ?? record;
}

/**
 * An update of a subscription not declared suspended reads it again and
 * makes it active as declared: one cancelled, expired, renewed or moved to
 * another price since the last read is renewed or assigned anew, so its id
 * and term are the service's to tell. One kept suspended keeps both.
 */
const madeActive: OutputChange<typeof SubscriptionInputs, typeof SubscriptionOutputs> = {
  changedBy: ["suspended"],
  alsoWhen: { recorded: "`suspended` is not true (an active one is read again)", holds: (olds) => !olds.suspended },
};

export const subscription = defineResource({
  typeName: "Subscription",
  description:
    "A plan subscription of an organisation. Destroying it cancels it (the organisation is suspended); one a refresh finds cancelled or expired is made active again by the next `up`, unless it is declared `suspended`, which keeps it cancelled.",
  idFormat: "<organizationId>/<first subscription id>",
  inputs: SubscriptionInputs,
  outputs: SubscriptionOutputs,
  updatedBy: {
    subscriptionId: madeActive,
    expireDate: madeActive,
    // As `suspended` declares, once the update is done; `drift` (below) previews them unknown when the last read saw otherwise.
    status: ["suspended"],
    cancelledAt: ["suspended"],
  },
  replaceOn: ["organizationId"],

  ownership: "madeDuringRun",
  lookUp: async ({ client }, inputs) =>
    (await activeAtPrice(client, inputs)).map((record) => candidateOf(inputs, record)),

  async create({ client }, inputs) {
    if (inputs.suspended) {
      throw new Error(
        `Subscription of ${inputs.organizationId}: suspended keeps an existing cancelled subscription cancelled, so it needs importId; a new subscription starts active`,
      );
    }
    const assigned = await assign(client, inputs);
    // The first subscription id names the resource for good; later ones show in `subscriptionId`.
    const id = joinId(inputs.organizationId, assigned.id);
    const record = await finishCreate(id, outputsFor(inputs, assigned), () =>
      renewAsDeclared(client, inputs.organizationId, assigned, inputs.keepActiveUntil),
    );
    return { id, outs: outputsFor(inputs, record) };
  },

  async read({ client }, id, props) {
    const { organizationId, child } = splitId(id, "Subscription", "subscriptionId");
    const found = await findSubscription(client, organizationId, props?.subscriptionId ?? child);
    if (!found) return undefined;
    const priceId = found.items[0]?.priceId ?? props?.priceId ?? "";
    return outputsFor(
      { organizationId, priceId, keepActiveUntil: props?.keepActiveUntil, suspended: props?.suspended },
      found,
    );
  },

  drift(olds) {
    // Declared suspended: it must stay cancelled, and is cancelled by the next up when it is not.
    if (olds.suspended) return olds.status === "suspended" ? [] : ["status"];
    // Cancelled or expired behind our back: the declared subscription is an active one.
    if (olds.status !== "active") return ["status"];
    // Not renewed as far as declared yet, e.g. after renewals that failed half-way.
    const short = olds.keepActiveUntil && Date.parse(olds.expireDate) <= Date.parse(olds.keepActiveUntil);
    return short ? ["expireDate"] : [];
  },

  async update({ client }, _id, olds, news, changed) {
    if (news.suspended) return outputsFor(news, await keepCancelled(client, olds, news));
    let record = await findSubscription(client, olds.organizationId, olds.subscriptionId);
    if (!record || statusOf(record) === "suspended") {
      // Cancelled behind our back (or gone): re-activation is a new assignment.
      record = await renewAsDeclared(client, news.organizationId, await assign(client, news), news.keepActiveUntil);
      return outputsFor(news, record);
    }
    if (changed.has("priceId")) record = await changePrice(client, news, record.id);
    record = await renewAsDeclared(client, news.organizationId, record, news.keepActiveUntil);
    return outputsFor(news, record);
  },

  async delete({ client }, _id, props) {
    const record = await findSubscription(client, props.organizationId, props.subscriptionId);
    if (record && record.cancelledAt === null) await cancelSubscription(client, props.organizationId, record.id);
  },
});

/** The Subscription resource; its inputs, outputs and id: docs/resources/subscription.md. */
export const Subscription = resourceClass(subscription);
export type Subscription = InstanceType<typeof Subscription>;
export type SubscriptionArgs = ConstructorParameters<typeof Subscription>[1];
