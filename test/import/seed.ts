import type { EventName } from "pulumi-dmarc-partner/api";
import type { DmarcClient } from "pulumi-dmarc-partner/client";

// A partner account made through the API, as a partner's dashboard or
// scripts would have made it: the client only, none of our resources.

interface SeedDomain {
  name: string;
  type?: "parked";
}

interface SeedWebhook {
  name: string;
  url: string;
  events: EventName[];
  active?: boolean;
}

export interface SeedOrganization {
  name: string;
  groups: { name: string; domains: SeedDomain[] }[];
  webhooks?: SeedWebhook[];
  /**
   * The plan assigned once the domains are in; `from`: assigned first and
   * moved to `plan`, which the service does by a new subscription;
   * `expired`: its term ended, never cancelled.
   */
  subscription?: {
    plan: "Starter" | "Business";
    frequency?: "m" | "y";
    cancelled?: boolean;
    expired?: boolean;
    from?: "Starter";
  };
  admins?: string[];
  /** What the import must make of it: an entry, or no entry for a reason matching this. */
  expected: "entry" | RegExp;
}

/** The service's ids of one seeded organisation's objects, as our resources name them. */
export interface SeededIds {
  organization: string;
  groups: Record<string, string>;
  domains: Record<string, string>;
  webhooks: Record<string, string>;
  /** The subscription's resource id (the cancelled one of a suspended organisation), if any: not an expired one, which no entry adopts. */
  subscription?: string;
}

/** What only the emulator's control plane can do to a seeded account. */
export interface SeedLevers {
  expireSubscription(subscriptionId: string): Promise<void>;
}

const hook = (name: string, host: string, active = true): SeedWebhook => ({
  name,
  url: `https://hooks.${host}/dmarc`,
  events: ["domain.verified", "report.received"],
  active,
});

/** One of eight shapes for the n-th organisation: what partners' accounts hold. */
const SHAPES: ((n: string) => SeedOrganization)[] = [
  (n) => ({
    name: `Shop ${n}`,
    groups: [{ name: "Main", domains: [{ name: `shop${n}.example` }] }],
    subscription: { plan: "Starter" },
    expected: "entry",
  }),
  (n) => ({
    name: `Mailer ${n} GmbH`,
    groups: [
      {
        name: "Mail",
        domains: [
          { name: `mailer${n}.example` },
          { name: `send.mailer${n}.example` },
          { name: `old-mailer${n}.example`, type: "parked" },
          { name: `mailer${n}.example.org`, type: "parked" },
        ],
      },
    ],
    subscription: { plan: "Business", frequency: "y" },
    expected: "entry",
  }),
  (n) => ({
    name: `Two Groups ${n}`,
    groups: [
      { name: "Production", domains: [{ name: `prod${n}.example` }, { name: `www.prod${n}.example` }] },
      { name: "Legacy", domains: [{ name: `legacy${n}.example`, type: "parked" }] },
    ],
    subscription: { plan: "Starter" },
    expected: "entry",
  }),
  (n) => ({
    name: `Hooked ${n}`,
    groups: [{ name: "Main", domains: [{ name: `hooked${n}.example` }] }],
    webhooks: [hook("events", `hooked${n}.example`), hook("audit", `hooked${n}.example`, false)],
    subscription: { plan: "Business" },
    expected: "entry",
  }),
  (n) => ({
    name: `Team ${n}`,
    groups: [{ name: "Main", domains: [{ name: `team${n}.example` }] }],
    admins: [`it@team${n}.example`, `ops@team${n}.example`],
    subscription: { plan: "Starter", frequency: "y" },
    expected: "entry",
  }),
  (n) => ({
    name: `Former ${n}`,
    groups: [{ name: "Main", domains: [{ name: `former${n}.example` }] }],
    subscription: { plan: "Starter", cancelled: true },
    expected: "entry",
  }),
  (n) => ({
    name: `Prospect ${n}`,
    groups: [{ name: "Main", domains: [{ name: `prospect${n}.example` }] }],
    expected: "entry",
  }),
  (n) => ({
    name: `Upgraded ${n}`,
    groups: [{ name: "Main", domains: [{ name: `upgraded${n}.example` }] }],
    subscription: { plan: "Business", from: "Starter" },
    expected: "entry",
  }),
];

/** Organisations whose names, domains or objects the import has to settle between them. */
const SPECIALS: SeedOrganization[] = [
  {
    name: "Acme Corp",
    groups: [{ name: "Main", domains: [{ name: "acme.example" }] }],
    subscription: { plan: "Starter" },
    expected: "entry",
  },
  {
    name: "ACME corp.",
    groups: [{ name: "Main", domains: [{ name: "acme-corp.example" }] }],
    subscription: { plan: "Starter" },
    expected: "entry",
  },
  {
    name: "株式会社",
    groups: [{ name: "本社", domains: [{ name: "kabushiki.example" }] }],
    subscription: { plan: "Starter" },
    expected: "entry",
  },
  {
    name: " Spaced Ltd ",
    groups: [{ name: "Main", domains: [{ name: "spaced.example" }] }],
    subscription: { plan: "Starter" },
    expected: /must not start or end with white space/,
  },
  {
    name: "Twin One",
    groups: [{ name: "Main", domains: [{ name: "twin-one.example" }, { name: "shared.example" }] }],
    subscription: { plan: "Starter" },
    expected: "entry",
  },
  {
    name: "Twin Two",
    groups: [{ name: "Main", domains: [{ name: "twin-two.example" }, { name: "shared.example" }] }],
    subscription: { plan: "Starter" },
    expected: "entry",
  },
  { name: "Empty Co", groups: [], subscription: { plan: "Starter" }, expected: /has no domain group/ },
  {
    name: "Lapsed Ltd",
    groups: [{ name: "Main", domains: [{ name: "lapsed.example" }] }],
    subscription: { plan: "Business", expired: true },
    expected: "entry",
  },
  {
    name: "Spread Ltd",
    groups: [
      { name: "Main", domains: [{ name: "spread.example" }] },
      { name: "Europe", domains: [{ name: "spread.example.eu" }, { name: "old.spread.example.eu", type: "parked" }] },
      { name: "Spare", domains: [] },
    ],
    webhooks: [hook("events", "spread.example")],
    subscription: { plan: "Business", frequency: "y", cancelled: true },
    expected: "entry",
  },
  {
    name: "Padded Hook",
    groups: [{ name: "Main", domains: [{ name: "padded-hook.example" }] }],
    webhooks: [hook("events ", "padded-hook.example"), hook("alerts", "padded-hook.example")],
    subscription: { plan: "Business" },
    expected: "entry",
  },
];

/** `count` organisations of the eight shapes in turn, then the specials. */
export function variedAccount(count: number): SeedOrganization[] {
  const width = String(count).length;
  const shaped = Array.from({ length: count }, (_, index) =>
    (SHAPES[index % SHAPES.length] as (n: string) => SeedOrganization)(String(index + 1).padStart(width, "0")),
  );
  return [...shaped, ...SPECIALS];
}

function priceOf(plans: Awaited<ReturnType<DmarcClient["listPlans"]>>, plan: string, frequency: "m" | "y"): string {
  const price = plans.find((candidate) => candidate.name === plan)?.prices.find((p) => p.frequency === frequency);
  if (!price) throw new Error(`the catalogue has no ${plan} ${frequency} price`);
  return price.id;
}

/** Makes one organisation and its objects, in the order a partner's dashboard would. */
export async function seedOrganization(
  client: DmarcClient,
  spec: SeedOrganization,
  plans: Awaited<ReturnType<DmarcClient["listPlans"]>>,
  levers?: SeedLevers,
): Promise<SeededIds> {
  const organization = await client.createOrganization({ name: spec.name });
  const id = organization.id;
  const ids: SeededIds = { organization: id, groups: {}, domains: {}, webhooks: {} };
  for (const group of spec.groups) {
    const created = await client.createDomainGroup({ organizationId: id, name: group.name });
    ids.groups[group.name] = `${id}/${created.id}`;
    for (const domain of group.domains) {
      await client.createDomain({
        organizationId: id,
        domain: domain.name,
        type: domain.type ?? "sending",
        groupId: created.id,
      });
      ids.domains[domain.name] = `${id}/${domain.name}`;
    }
  }
  for (const webhook of spec.webhooks ?? []) {
    const created = await client.createWebhook({ ...webhook, ownerId: id, active: webhook.active ?? true });
    ids.webhooks[webhook.name] = created.objectId;
  }
  for (const email of spec.admins ?? []) {
    await client.inviteUser({
      organizationId: id,
      permissions: { users: [{ email }], organization: { role: "admin" } },
    });
  }
  const subscription = spec.subscription;
  if (subscription) {
    const frequency = subscription.frequency ?? "m";
    let assigned = await client.assignSubscription({
      organizationId: id,
      priceId: priceOf(plans, subscription.from ?? subscription.plan, frequency),
    });
    if (subscription.from) {
      assigned = await client.changeSubscriptionPrice(assigned.id, priceOf(plans, subscription.plan, frequency));
    }
    if (subscription.cancelled) await client.cancelSubscription(assigned.id);
    if (subscription.expired) {
      if (!levers) throw new Error(`${spec.name}: an expired subscription needs the emulator's levers`);
      await levers.expireSubscription(assigned.id);
    } else {
      ids.subscription = `${id}/${assigned.id}`;
    }
  }
  return ids;
}

/** Makes the organisations one after another (their order is their age), and a webhook the partner owns. */
export async function seedAccount(
  client: DmarcClient,
  organizations: readonly SeedOrganization[],
  partnerId: string,
  levers?: SeedLevers,
): Promise<SeededIds[]> {
  const plans = await client.listPlans();
  const seeded: SeededIds[] = [];
  for (const spec of organizations) seeded.push(await seedOrganization(client, spec, plans, levers));
  await client.createWebhook({
    name: "partner events",
    ownerId: partnerId,
    url: "https://hooks.partner.example/dmarc",
    events: ["domain.verified"],
  });
  return seeded;
}
