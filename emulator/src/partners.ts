import { readFileSync } from "node:fs";
import { Plan, PlanFeatures, type Price } from "pulumi-dmarc-partner/api";
import { z } from "zod";

/**
 * A plan of the emulator's catalogue. The service may leave any feature out,
 * but the emulator enforces the domain limit, so its own plans state every
 * feature the guides list.
 */
export const CataloguePlan = Plan.extend({ features: PlanFeatures.required() });
export type CataloguePlan = z.output<typeof CataloguePlan>;
export type CatalogueFeatures = CataloguePlan["features"];

/** A reseller known to the emulator: its OAuth client, static bearer tokens and plan catalogue. */
export interface EmulatorPartner {
  id: string;
  name: string;
  clientId: string;
  clientSecret: string;
  tokens: string[];
  catalogue?: CataloguePlan[];
}

/** A partner with its catalogue filled in. */
export type Partner = EmulatorPartner & { catalogue: CataloguePlan[] };

const PartnersFile = z.array(
  z.object({
    id: z.string().min(1),
    name: z.string().min(1),
    clientId: z.string().min(1),
    clientSecret: z.string().min(1),
    tokens: z.array(z.string().min(1)),
    catalogue: z.array(CataloguePlan).optional(),
  }),
);

// Stable timestamps keep the default catalogue identical across restarts.
const CATALOGUE_EPOCH = "2024-01-01T00:00:00.000Z";

function price(partnerId: string, tier: string, frequency: "m" | "y", amount: number): Price {
  return {
    id: `price_${partnerId}_${tier}_${frequency === "m" ? "monthly" : "yearly"}`,
    name: `${tier[0]?.toUpperCase()}${tier.slice(1)} ${frequency === "m" ? "monthly" : "yearly"}`,
    amount,
    currency: "USD",
    frequency,
    billingPeriod: 1,
    createdAt: CATALOGUE_EPOCH,
    updatedAt: CATALOGUE_EPOCH,
  };
}

/** A lower and a higher tier, each with a monthly and a yearly price whose ids belong to this partner only. */
export function defaultCatalogue(partnerId: string): CataloguePlan[] {
  return [
    {
      id: `plan_${partnerId}_starter`,
      name: "Starter",
      features: { domainCount: 5, emailVolumeCount: 100_000, dataRetentionDays: 30, alerting: false, apiAccess: false },
      prices: [price(partnerId, "starter", "m", 19), price(partnerId, "starter", "y", 190)],
      createdAt: CATALOGUE_EPOCH,
      updatedAt: CATALOGUE_EPOCH,
    },
    {
      id: `plan_${partnerId}_business`,
      name: "Business",
      features: {
        domainCount: 50,
        emailVolumeCount: 1_000_000,
        dataRetentionDays: 365,
        alerting: true,
        apiAccess: true,
      },
      prices: [price(partnerId, "business", "m", 99), price(partnerId, "business", "y", 990)],
      createdAt: CATALOGUE_EPOCH,
      updatedAt: CATALOGUE_EPOCH,
    },
  ];
}

/** Used when no partners are configured; the credentials are printed at start-up, so they are not secrets. */
export const DEMO_PARTNERS: EmulatorPartner[] = [
  {
    id: "demo-alpha",
    name: "Alpha Reseller (demo)",
    clientId: "demo-alpha-client",
    clientSecret: "demo-alpha-secret",
    tokens: ["demo-alpha-token"],
  },
  {
    id: "demo-beta",
    name: "Beta Reseller (demo)",
    clientId: "demo-beta-client",
    clientSecret: "demo-beta-secret",
    tokens: ["demo-beta-token"],
  },
];

export function loadPartnersFile(path: string): EmulatorPartner[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new Error(`cannot read the partners file ${path}: ${(error as Error).message}`);
  }
  const parsed = PartnersFile.safeParse(raw);
  if (!parsed.success) throw new Error(`the partners file ${path} is invalid: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

function requireUnique(kind: string, values: string[]): void {
  const seen = new Set<string>();
  for (const value of values) {
    if (seen.has(value)) throw new Error(`partners: ${kind} "${value}" is used more than once`);
    seen.add(value);
  }
}

/** Looks partners up by every credential they can present and by the prices they sell. */
export class PartnerDirectory {
  readonly all: Partner[];
  private readonly byId = new Map<string, Partner>();
  private readonly byClientId = new Map<string, Partner>();
  private readonly byStaticToken = new Map<string, Partner>();

  constructor(partners: EmulatorPartner[]) {
    this.all = partners.map((partner) => ({
      ...partner,
      catalogue: partner.catalogue ?? defaultCatalogue(partner.id),
    }));
    requireUnique(
      "id",
      this.all.map((partner) => partner.id),
    );
    requireUnique(
      "clientId",
      this.all.map((partner) => partner.clientId),
    );
    requireUnique(
      "token",
      this.all.flatMap((partner) => partner.tokens),
    );
    requireUnique(
      "price id",
      this.all.flatMap((partner) => partner.catalogue.flatMap((plan) => plan.prices.map((price) => price.id))),
    );
    for (const partner of this.all) {
      this.byId.set(partner.id, partner);
      this.byClientId.set(partner.clientId, partner);
      for (const token of partner.tokens) this.byStaticToken.set(token, partner);
    }
  }

  get(id: string): Partner | undefined {
    return this.byId.get(id);
  }

  withClientId(clientId: string): Partner | undefined {
    return this.byClientId.get(clientId);
  }

  withStaticToken(token: string): Partner | undefined {
    return this.byStaticToken.get(token);
  }
}

/** The plan and price behind a price id, looked up in one partner's catalogue only. */
export function findPrice(partner: Partner, priceId: string): { plan: CataloguePlan; price: Price } | undefined {
  for (const plan of partner.catalogue) {
    const match = plan.prices.find((candidate) => candidate.id === priceId);
    if (match) return { plan, price: match };
  }
  return undefined;
}
