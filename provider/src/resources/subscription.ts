import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import type { Subscription as SubscriptionRecord } from "../api";
import { type DmarcClient, isNotFound } from "../client";
import { createOrAdopt, finishCreate, joinId, splitId } from "../runtime/adopt";
import type { ResourceDefinition } from "../runtime/lifecycle";
import { type AdoptableArgs, DmarcResource } from "../runtime/resource";

/** Renewals one operation may make to reach `keepActiveUntil`: ten years of monthly terms. */
export const MAX_RENEWALS = 120;

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2}))?$/;

export const SubscriptionInputs = z.object({
  organizationId: z.string().min(1, { message: "must be an organisation id" }),
  priceId: z.string().min(1, { message: "must be a price id of the partner's catalogue (see getPriceId)" }),
  /** Declarative renewal: renew while the subscription expires before this date (ISO 8601). */
  keepActiveUntil: z
    .string()
    .refine((value) => ISO_DATE.test(value) && !Number.isNaN(Date.parse(value)), {
      message: "must be an ISO 8601 date or date-time such as 2027-12-31 or 2027-12-31T00:00:00Z",
    })
    .optional(),
});
export type SubscriptionInputs = z.infer<typeof SubscriptionInputs>;

export type SubscriptionStatus = "active" | "suspended" | "expired";

export interface SubscriptionOutputs extends SubscriptionInputs {
  /** The current subscription of the service; a price change moves it to a new id. */
  subscriptionId: string;
  status: SubscriptionStatus;
  expireDate: string;
  cancelledAt: string | null;
}

export function statusOf(record: SubscriptionRecord, now = Date.now()): SubscriptionStatus {
  if (record.cancelledAt !== null) return "suspended";
  return Date.parse(record.expireDate) <= now ? "expired" : "active";
}

function outputsFor(inputs: SubscriptionInputs, record: SubscriptionRecord): SubscriptionOutputs {
  return {
    ...inputs,
    priceId: record.items[0]?.priceId ?? inputs.priceId,
    subscriptionId: record.id,
    status: statusOf(record),
    expireDate: record.expireDate,
    cancelledAt: record.cancelledAt,
  };
}

/** The organisation's subscriptions; none when the organisation itself is gone. */
async function subscriptionsOf(client: DmarcClient, organizationId: string): Promise<SubscriptionRecord[]> {
  try {
    return await client.listSubscriptions(organizationId);
  } catch (error) {
    if (isNotFound(error)) return [];
    throw error;
  }
}

async function findSubscription(
  client: DmarcClient,
  organizationId: string,
  subscriptionId: string,
): Promise<SubscriptionRecord | undefined> {
  return (await subscriptionsOf(client, organizationId)).find((candidate) => candidate.id === subscriptionId);
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
    current = await createOrAdopt(
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
export async function cancelSubscription(
  client: DmarcClient,
  organizationId: string,
  subscriptionId: string,
): Promise<void> {
  await createOrAdopt(
    client,
    async () => {
      await client.cancelSubscription(subscriptionId);
      return true;
    },
    async () => {
      const found = await findSubscription(client, organizationId, subscriptionId);
      return found === undefined || found.cancelledAt !== null ? true : undefined;
    },
  );
}

/** Assigns the declared price; renewing it as declared is up to the caller. */
async function assign(client: DmarcClient, inputs: SubscriptionInputs): Promise<SubscriptionRecord> {
  const startedAt = Date.now();
  return createOrAdopt(
    client,
    () => client.assignSubscription({ organizationId: inputs.organizationId, priceId: inputs.priceId }),
    async () =>
      (await client.listSubscriptions(inputs.organizationId)).find(
        (candidate) =>
          candidate.cancelledAt === null &&
          candidate.items.some((item) => item.priceId === inputs.priceId) &&
          Date.parse(candidate.createdAt) >= startedAt - 5_000,
      ),
  );
}

export const subscription: ResourceDefinition<SubscriptionInputs, SubscriptionOutputs> = {
  typeName: "Subscription",
  inputs: SubscriptionInputs,
  replaceOn: ["organizationId"],

  async create({ client }, inputs) {
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
    return { outs: outputsFor({ organizationId, priceId, keepActiveUntil: props?.keepActiveUntil }, found) };
  },

  drift(olds) {
    // Cancelled or expired behind our back: the declared subscription is an active one.
    if (olds.status !== "active") return ["status"];
    // Not renewed as far as declared yet, e.g. after renewals that failed half-way.
    const short = olds.keepActiveUntil && Date.parse(olds.expireDate) <= Date.parse(olds.keepActiveUntil);
    return short ? ["expireDate"] : [];
  },

  async update({ client }, _id, olds, news) {
    let record = await findSubscription(client, olds.organizationId, olds.subscriptionId);
    if (!record || statusOf(record) === "suspended") {
      // Cancelled behind our back (or gone): re-activation is a new assignment.
      record = await renewAsDeclared(client, news.organizationId, await assign(client, news), news.keepActiveUntil);
      return outputsFor(news, record);
    }
    if (olds.priceId !== news.priceId) {
      const previousId = record.id;
      record = await createOrAdopt(
        client,
        () => client.changeSubscriptionPrice(previousId, news.priceId),
        async () =>
          (await client.listSubscriptions(news.organizationId)).find(
            (candidate) =>
              candidate.cancelledAt === null && candidate.items.some((item) => item.priceId === news.priceId),
          ),
      );
    }
    record = await renewAsDeclared(client, news.organizationId, record, news.keepActiveUntil);
    return outputsFor(news, record);
  },

  async delete({ client }, _id, props) {
    const record = await findSubscription(client, props.organizationId, props.subscriptionId);
    if (record && record.cancelledAt === null) await cancelSubscription(client, props.organizationId, record.id);
  },
};

export interface SubscriptionArgs extends AdoptableArgs {
  /** The organisation subscribed. A different organisation replaces the subscription. */
  organizationId: pulumi.Input<string>;
  /** Price of the partner's catalogue (see `getPriceId`). A change moves the subscription in place. */
  priceId: pulumi.Input<string>;
  /** Keep the subscription active until this date: renewed while it expires before it. */
  keepActiveUntil?: pulumi.Input<string>;
}

/**
 * A plan subscription of an organisation. Deleting it cancels it (the
 * organisation is suspended). Resource id: `<organizationId>/<first subscription id>`.
 */
export class Subscription extends DmarcResource {
  declare readonly organizationId: pulumi.Output<string>;
  declare readonly priceId: pulumi.Output<string>;
  declare readonly keepActiveUntil: pulumi.Output<string | undefined>;
  declare readonly subscriptionId: pulumi.Output<string>;
  declare readonly status: pulumi.Output<SubscriptionStatus>;
  declare readonly expireDate: pulumi.Output<string>;
  declare readonly cancelledAt: pulumi.Output<string | null>;

  constructor(name: string, args: SubscriptionArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      "Subscription",
      name,
      { ...args, subscriptionId: undefined, status: undefined, expireDate: undefined, cancelledAt: undefined },
      opts,
    );
  }
}
