import { z } from "zod";
import { Timestamp } from "./common";

export const AssignSubscriptionRequest = z.object({
  organizationId: z.string().min(1),
  priceId: z.string().min(1),
});
export type AssignSubscriptionRequest = z.infer<typeof AssignSubscriptionRequest>;

export const ChangeSubscriptionPriceRequest = z.object({ priceId: z.string().min(1) });
export type ChangeSubscriptionPriceRequest = z.infer<typeof ChangeSubscriptionPriceRequest>;

/**
 * An item's features are camelCase in the description's example and
 * snake_case in its schema; they are kept as sent, since nothing here reads them.
 */
export const SubscriptionItem = z.object({
  id: z.string().min(1),
  quantity: z.number().optional(),
  priceId: z.string().min(1),
  features: z.record(z.string(), z.unknown()).optional(),
  createdAt: Timestamp.optional(),
  updatedAt: Timestamp.optional(),
});

export const Subscription = z.object({
  id: z.string().min(1),
  expireDate: Timestamp,
  /** Optional in the description: an active subscription may leave it out. Read as null then. */
  cancelledAt: Timestamp.nullable()
    .optional()
    .transform((value) => value ?? null),
  items: z.array(SubscriptionItem),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Subscription = z.infer<typeof Subscription>;

export const SubscriptionList = z.array(Subscription);

export const SubscriptionListQuery = z.object({ organizationId: z.string().min(1) });
