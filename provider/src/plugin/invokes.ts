import { z } from "zod";
import { type MagicLink, PlanList } from "../api";
import type { DmarcClient } from "../client";
import { MagicLinkInputs } from "../functions/magicLink";
import { PriceSelectorInputs, selectPriceId } from "../functions/plans";
import type { ObjectSchema } from "../runtime/lifecycle";

// The package's functions as the plugin serves them (`dmarc:index:<name>`),
// each over the same client call as the TypeScript function of that name.

interface InvokeDefinition<I extends ObjectSchema, O extends ObjectSchema> {
  description: string;
  inputs: I;
  outputs: O;
  /** Outputs kept as Pulumi secrets. */
  secretOutputs?: readonly (keyof z.output<O> & string)[];
  run(client: DmarcClient, inputs: z.output<I>): Promise<z.input<O>>;
}

function defineInvoke<I extends ObjectSchema, O extends ObjectSchema>(
  definition: InvokeDefinition<I, O>,
): InvokeDefinition<I, O> {
  return definition;
}

export const invokeDefinitions = {
  getPlans: defineInvoke({
    description: "The plans of the partner's catalogue, with their prices.",
    inputs: z.object({}),
    outputs: z.object({ plans: PlanList.describe("Every plan, with its features and prices.") }),
    run: async (client) => ({ plans: await client.listPlans() }),
  }),
  getPriceId: defineInvoke({
    description:
      "The price id of a plan of the partner's catalogue, by plan name and billing frequency, for a Subscription's `priceId`. Fails naming the plans and prices that exist.",
    inputs: PriceSelectorInputs,
    outputs: z.object({ priceId: z.string().describe("The price's id.") }),
    run: async (client, selector) => ({ priceId: selectPriceId(await client.listPlans(), selector) }),
  }),
  createMagicLink: defineInvoke({
    description:
      "Issues a time-bound, single-use sign-in link for an invited user. The link is a credential, kept as a secret; each call issues a new one, previews included.",
    inputs: MagicLinkInputs,
    outputs: z.object({
      url: z.string().describe("The sign-in link."),
      expiringAt: z.string().describe("When the link stops working (ISO 8601)."),
    }),
    secretOutputs: ["url"],
    run: async (client, inputs) => {
      const link: MagicLink = await client.createMagicLink(inputs);
      return { url: link.url, expiringAt: link.expiringAt };
    },
  }),
} as const;

export type InvokeName = keyof typeof invokeDefinitions;
