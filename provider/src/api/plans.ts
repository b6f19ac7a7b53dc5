import { z } from "zod";
import { Timestamp } from "./common";

export const Currency = z.enum(["USD", "EUR", "GBP"]);
export const Frequency = z.enum(["m", "y", "d"]);
export type Frequency = z.infer<typeof Frequency>;

export const Price = z.object({
  id: z.string().min(1),
  name: z.string(),
  amount: z.number(),
  currency: Currency,
  frequency: Frequency,
  billingPeriod: z.number(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Price = z.infer<typeof Price>;

/** Hard limits and flags of a plan; unknown feature keys are kept. */
export const PlanFeatures = z
  .object({
    domainCount: z.number().int().nonnegative(),
    emailVolumeCount: z.number().int().nonnegative(),
    dataRetentionDays: z.number().int().nonnegative(),
    alerting: z.boolean(),
    apiAccess: z.boolean(),
  })
  .catchall(z.unknown());
export type PlanFeatures = z.infer<typeof PlanFeatures>;

export const Plan = z.object({
  id: z.string().min(1),
  name: z.string(),
  features: PlanFeatures,
  prices: z.array(Price),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Plan = z.infer<typeof Plan>;

export const PlanList = z.array(Plan);
