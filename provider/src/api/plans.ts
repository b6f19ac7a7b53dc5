import { z } from "zod";
import { Timestamp } from "./common";

export const Currency = z.enum(["USD", "EUR", "GBP"]);
export const Frequency = z.enum(["m", "y", "d"]);
export type Frequency = z.infer<typeof Frequency>;

/**
 * The description's enum is `m`/`y`/`d`, yet its example says `"month"`: both
 * spellings (and the `-ly` names) are read as the letter code.
 */
const FREQUENCY_SPELLINGS: Record<string, Frequency> = {
  m: "m",
  month: "m",
  monthly: "m",
  y: "y",
  year: "y",
  yearly: "y",
  d: "d",
  day: "d",
  daily: "d",
};

export const PriceFrequency = z
  .string()
  .transform((value, context) => {
    const code = FREQUENCY_SPELLINGS[value.toLowerCase()];
    if (code) return code;
    context.addIssue({ code: "custom", message: `"${value}" is not a known billing frequency (m, y, d)` });
    return z.NEVER;
  })
  .pipe(Frequency);

export const Price = z.object({
  id: z.string().min(1),
  name: z.string(),
  amount: z.number(),
  currency: Currency,
  frequency: PriceFrequency,
  billingPeriod: z.number(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Price = z.infer<typeof Price>;

/**
 * Hard limits and flags of a plan. The description requires none of them, so
 * each is optional; unknown feature keys are kept.
 */
export const PlanFeatures = z
  .object({
    domainCount: z.number().int().nonnegative().optional(),
    emailVolumeCount: z.number().int().nonnegative().optional(),
    dataRetentionDays: z.number().int().nonnegative().optional(),
    alerting: z.boolean().optional(),
    apiAccess: z.boolean().optional(),
  })
  .catchall(z.unknown());
export type PlanFeatures = z.infer<typeof PlanFeatures>;

export const Plan = z.object({
  id: z.string().min(1),
  name: z.string(),
  features: PlanFeatures.default({}),
  prices: z.array(Price),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Plan = z.infer<typeof Plan>;

export const PlanList = z.array(Plan);
