import { z } from "zod";
import { Timestamp } from "./common";
import { PlanFeatures } from "./plans";

export const AssignSubscriptionRequest = z.object({
  organizationId: z.string().min(1),
  priceId: z.string().min(1),
});
export type AssignSubscriptionRequest = z.infer<typeof AssignSubscriptionRequest>;

export const ChangeSubscriptionPriceRequest = z.object({ priceId: z.string().min(1) });
export type ChangeSubscriptionPriceRequest = z.infer<typeof ChangeSubscriptionPriceRequest>;

export const SubscriptionItem = z.object({
  id: z.string().min(1),
  quantity: z.number(),
  priceId: z.string().min(1),
  features: PlanFeatures.partial().catchall(z.unknown()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const Subscription = z.object({
  id: z.string().min(1),
  expireDate: Timestamp,
  cancelledAt: Timestamp.nullable(),
  items: z.array(SubscriptionItem),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Subscription = z.infer<typeof Subscription>;

export const SubscriptionList = z.array(Subscription);

export const SubscriptionListQuery = z.object({ organizationId: z.string().min(1) });
