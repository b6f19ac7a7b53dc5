import { z } from "zod";
import type { Frequency, Plan } from "../api";
import { programClient } from "./programClient";

/** Plans with their prices available to the partner. */
export async function getPlans(): Promise<Plan[]> {
  return (await programClient()).listPlans();
}

/** Billing frequencies by name, as tenants and inventories write them. */
export const FrequencyName = z.enum(["monthly", "yearly", "daily"]);

/** A billing frequency by name, or by the service's letter code. */
export type BillingFrequency = z.infer<typeof FrequencyName> | Frequency;

const FREQUENCY_CODES: Record<BillingFrequency, Frequency> = {
  monthly: "m",
  yearly: "y",
  daily: "d",
  m: "m",
  y: "y",
  d: "d",
};

/** The name of each frequency code, as inventories and messages spell it. */
export const FREQUENCY_NAMES = { m: "monthly", y: "yearly", d: "daily" } as const satisfies Record<
  Frequency,
  z.infer<typeof FrequencyName>
>;

/** A price of the catalogue by plan name: the plugin's `getPriceId` invoke checks its inputs with it. */
export const PriceSelectorInputs = z.object({
  plan: z.string().min(1).describe("Plan name, matched without regard to case, e.g. `Business`."),
  frequency: z
    .enum([...FrequencyName.options, "m", "y", "d"])
    .optional()
    .describe("Billing frequency; default `monthly`."),
  currency: z.string().min(1).optional().describe("Currency, e.g. `EUR`, when a plan has prices in several."),
});

export interface PriceSelector {
  /** Plan name, matched without regard to case, e.g. `Business`. */
  plan: string;
  /** Billing frequency; default `monthly`. */
  frequency?: BillingFrequency;
  /** Currency, e.g. `EUR`, when a plan has prices in several. */
  currency?: string;
}

function describeCatalogue(plans: readonly Plan[]): string {
  if (plans.length === 0) return "the catalogue is empty";
  return plans
    .map((plan) => {
      const prices = plan.prices.map((price) => `${FREQUENCY_NAMES[price.frequency]} ${price.currency}`).join(", ");
      return `"${plan.name}" (${prices || "no prices"})`;
    })
    .join("; ");
}

/** Picks the price id of a plan by name and billing frequency, failing with the list of what exists. */
export function selectPriceId(plans: readonly Plan[], selector: PriceSelector): string {
  const frequency = FREQUENCY_CODES[selector.frequency ?? "monthly"];
  if (!frequency) {
    throw new Error(`Billing frequency "${selector.frequency}" is not one of monthly, yearly, daily`);
  }
  const plan = plans.find((candidate) => candidate.name.toLowerCase() === selector.plan.toLowerCase());
  if (!plan) {
    throw new Error(
      `No plan named "${selector.plan}" in the partner's catalogue; available: ${describeCatalogue(plans)}`,
    );
  }
  const prices = plan.prices.filter(
    (price) =>
      price.frequency === frequency &&
      (selector.currency === undefined || price.currency === selector.currency.toUpperCase()),
  );
  const wanted = `${FREQUENCY_NAMES[frequency]}${selector.currency ? ` ${selector.currency.toUpperCase()}` : ""}`;
  if (prices.length === 0) {
    throw new Error(`Plan "${plan.name}" has no ${wanted} price; available: ${describeCatalogue([plan])}`);
  }
  if (prices.length > 1) {
    throw new Error(
      `Plan "${plan.name}" has ${prices.length} ${wanted} prices (${prices.map((price) => price.currency).join(", ")}); name the currency`,
    );
  }
  return (prices[0] as Plan["prices"][number]).id;
}

/** The price id of a plan of the partner's catalogue, for a Subscription's `priceId`. */
export async function getPriceId(selector: PriceSelector): Promise<string> {
  return selectPriceId(await getPlans(), selector);
}
