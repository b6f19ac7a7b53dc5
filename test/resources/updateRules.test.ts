import fc from "fast-check";
import { dynamicProviderHost as host, type resourceDefinitions } from "pulumi-dmarc-partner";
import type { DmarcClient } from "pulumi-dmarc-partner/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, partnerClient, startTestEmulator } from "../support/emulator";
import { asPreviewed, unknownButKept } from "../support/previewed";

// Each type's update held to its preview, in process against the emulator:
// random in-place changes of a new object's inputs, from the state its create
// recorded or one the service no longer matches (a refresh before the service
// moved on), with the service moved on since the last read or not. Sound:
// every output the preview shows known, at any depth, is what the update
// records. Precise: every output the update provably keeps (it recorded the
// state's value where the service held another, so it took it from the
// state) the preview shows known. Nothing such a change makes is a
// replacement. The preview and `update` read the same rule of the definition
// (`updatedBy`); this is where the two are held together.

type Props = Record<string, unknown>;

/** One type's in-place updates. */
interface UpdateCase {
  /** A new object's declaration, with what it depends on made first. */
  declared(): Promise<Props>;
  /** Changes of the inputs it updates in place; an input changed to undefined is left out. */
  changes: fc.Arbitrary<Props>;
  /**
   * What the state may hold that the service does not, by what left it
   * there: outputs a refresh recorded before the service moved on, over the
   * create's. An output the service never changes is given a value it never
   * held, which only a copy of the state can keep.
   */
  recorded?: Record<string, (outs: Props) => Props>;
  /**
   * What may happen on the service after the last read, to the object or
   * around it, by name: each answers the outputs it moved, as the service
   * holds them now, where that is certain.
   */
  meanwhile?: Record<string, (id: string, outs: Props) => Promise<Props | undefined>>;
  /** The change as inputs, with what it names made first. */
  made?(change: Props, declared: Props): Promise<Props>;
}

let handle: EmulatorHandle;
/** The test's own client: the service moving on behind the provider's back. */
let client: DmarcClient;
let serial = 0;
/** A name no other run has used, for objects the service keeps apart by name. */
const unique = (prefix: string) => `${prefix}${++serial}`;

async function created(typeName: string, declared: Props): Promise<{ id: string; outs: Props }> {
  const checked = await host.check(typeName, {}, declared);
  expect(checked.failures ?? []).toEqual([]);
  const result = await host.create(typeName, checked.inputs as Props);
  return { id: result.id, outs: result.outs as Props };
}

const organization = async () => (await created("Organization", { name: unique("Owner ") })).id;

/** A new Domain: the simulated DNS zone serves the domains the service knows. */
async function newDomain(): Promise<{ id: string; outs: Props }> {
  const organizationId = await organization();
  const domain = `${unique("d")}.acme.example`;
  return created("Domain", { organizationId, domain, groupId: await group(organizationId) });
}

/** The domain's setup record published and verified by the service. */
async function verify(outs: Props): Promise<void> {
  const record = outs.setupRecord as { host: string; recordType: string; value: string };
  await handle.control("PUT", "/dns/records", { name: record.host, type: record.recordType, values: [record.value] });
  await handle.control("POST", `/domains/${outs.domain}/verify`, { organizationId: outs.organizationId });
}

async function verifiedDomain(): Promise<string> {
  const { id, outs } = await newDomain();
  await verify(outs);
  return id;
}

/** A new group's groupId, the part of its resource id after the organisation's. */
const group = async (organizationId: string) =>
  (await created("DomainGroup", { organizationId, name: unique("group ") })).id.split("/")[1] as string;

const monthlyPrices = async () =>
  (await partnerClient(handle).listPlans()).flatMap((plan) =>
    plan.prices.filter((price) => price.frequency === "m").map((price) => price.id),
  );

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
const displayNames = fc.stringMatching(/^[A-Z][a-z]{1,8}( [A-Z][a-z]{1,8})?$/);
let prices: string[] = [];

const CASES: Record<keyof typeof resourceDefinitions, UpdateCase> = {
  organization: {
    declared: async () => ({ name: unique("Org ") }),
    changes: fc.record(
      { name: displayNames, onDelete: fc.constantFrom("delete", "cancelSubscriptions") },
      {
        requiredKeys: [],
      },
    ),
    recorded: { "another createdAt": () => ({ createdAt: "2001-02-03T04:05:06.000Z" }) },
  },
  domainGroup: {
    declared: async () => ({ organizationId: await organization(), name: unique("group ") }),
    changes: fc.record({ name: displayNames.map((name) => unique(`${name} `)) }, { requiredKeys: [] }),
    recorded: { "a domain since moved out": () => ({ domains: ["left.acme.example"] }) },
    meanwhile: {
      "a domain joined": async (id, outs) => {
        const groupId = id.split("/")[1];
        const domain = `${unique("j")}.acme.example`;
        await created("Domain", { organizationId: outs.organizationId, domain, groupId });
        return { domains: [...(outs.domains as string[]), domain] };
      },
    },
  },
  domain: {
    declared: async () => {
      const organizationId = await organization();
      return { organizationId, domain: `${unique("mail")}.acme.example`, groupId: await group(organizationId) };
    },
    changes: fc.record(
      {
        type: fc.constantFrom("sending", "parked"),
        // Another group, by its groupId or its resource id.
        groupId: fc.constantFrom("groupId", "resource id"),
        setupRecordType: fc.constantFrom("TXT", "CNAME"),
        zone: fc.constantFrom(undefined, "acme.example"),
      },
      { requiredKeys: [] },
    ),
    recorded: {
      "the record as the service gave it earlier": (outs) => ({
        setupRecord: { ...(outs.setupRecord as Props), value: "v=DMARC1; p=none; rua=mailto:earlier@acme.example" },
      }),
    },
    meanwhile: {
      verified: async (_id, outs) => {
        await verify(outs);
        return { verified: true };
      },
      "its group renamed": async (_id, outs) => {
        const name = unique("renamed ");
        await client.updateDomainGroup(outs.organizationId as string, outs.groupId as string, { name });
        return { domainGroup: name };
      },
    },
    async made(change, { organizationId }) {
      if (change.groupId === undefined) return change;
      const other = await group(organizationId as string);
      return { ...change, groupId: change.groupId === "groupId" ? other : `${organizationId}/${other}` };
    },
  },
  domainVerification: {
    declared: async () => ({ domainId: await verifiedDomain(), timeout: "1m", pollInterval: "1s" }),
    changes: fc.record(
      {
        recordValue: fc.constantFrom(undefined, "v=DMARC1; p=none", "v=DMARC1; p=reject"),
        timeout: fc.constantFrom("45m", "2m", "90s"),
        pollInterval: fc.constantFrom("1s", "2s"),
      },
      { requiredKeys: [] },
    ),
    recorded: {
      // A refresh before the service verified the domain again: the next update waits for it.
      unverified: () => ({ verified: false }),
      "an earlier policy": () => ({ policy: "quarantine" }),
    },
  },
  webhook: {
    declared: async () => ({
      name: unique("hooks "),
      url: "https://hooks.example/in",
      events: ["domain.created"],
    }),
    changes: fc.record(
      {
        name: displayNames,
        url: fc.constantFrom("https://hooks.example/in", "https://hooks.example/v2"),
        events: fc.subarray(["domain.created", "domain.verified", "report.received"], { minLength: 1 }),
        active: fc.boolean(),
        secretVersion: fc.integer({ min: 0, max: 2 }),
      },
      { requiredKeys: [] },
    ),
    meanwhile: {
      "its secret rotated": async (id) => ({ secret: (await client.regenerateWebhookSecret(id)).secret }),
    },
  },
  subscription: {
    declared: async () => ({ organizationId: await organization(), priceId: prices[0] }),
    // A cancelled subscription keeps its price: suspending it and moving it to another price is refused.
    changes: fc.oneof(
      fc.record(
        { priceId: fc.integer({ min: 0, max: 3 }), keepActiveUntil: fc.constantFrom(undefined, day(40), day(400)) },
        { requiredKeys: [] },
      ),
      fc.record({ suspended: fc.constantFrom(true, false), keepActiveUntil: fc.constantFrom(undefined, day(40)) }),
    ),
    // What moved is left unsaid: an update that makes the subscription active again records `active` anew.
    meanwhile: {
      cancelled: async (_id, outs) => {
        await client.cancelSubscription(outs.subscriptionId as string);
        return undefined;
      },
      "moved to another price": async (_id, outs) => {
        await client.changeSubscriptionPrice(outs.subscriptionId as string, prices[1] as string);
        return undefined;
      },
      expired: async (_id, outs) => {
        await handle.control("POST", `/subscriptions/${outs.subscriptionId}/expire`);
        return undefined;
      },
      renewed: async (_id, outs) => ({
        expireDate: (await client.renewSubscription(outs.subscriptionId as string)).expireDate,
      }),
    },
    made: async (change) =>
      typeof change.priceId === "number" ? { ...change, priceId: prices[change.priceId % prices.length] } : change,
  },
  invitation: {
    declared: async () => ({ organizationId: await organization(), email: `${unique("user")}@acme.example` }),
    changes: fc.record(
      { redirectUrl: fc.constantFrom(undefined, "https://app.acme.example/welcome", "https://acme.example/") },
      { requiredKeys: [] },
    ),
    meanwhile: {
      accepted: async (_id, outs) => {
        await handle.control("POST", `/users/${outs.userId}/accept`);
        return { emailVerified: true };
      },
      revoked: async (_id, outs) => {
        const organizationId = outs.organizationId as string;
        await client.revokeOrganizationAccess({ organizationId, userIds: [outs.userId as string] });
        return { userId: undefined, emailVerified: undefined };
      },
    },
  },
  rfc2136Record: {
    declared: async () => ({
      server: handle.emulator.dnsServer,
      keyName: handle.emulator.dnsKey?.name,
      keySecret: handle.emulator.dnsKey?.secret,
      name: `_dmarc.${(await newDomain()).outs.domain}`,
      type: "TXT",
      value: "v=DMARC1; p=none",
    }),
    changes: fc.record(
      {
        zone: fc.constantFrom(undefined, "zone"),
        value: fc.constantFrom("v=DMARC1; p=none", "v=DMARC1; p=quarantine; pct=50"),
        ttl: fc.constantFrom(300, 3600),
      },
      { requiredKeys: [] },
    ),
    // The zone by name: the record's domain.
    made: async (change, { name }) =>
      change.zone === undefined ? change : { ...change, zone: (name as string).replace(/^_dmarc\./, "") },
  },
};

beforeAll(async () => {
  handle = await startTestEmulator();
  await host.configure({
    config: {
      get: (key: string) => handle.stackConfig[key]?.value,
      require: (key: string) => handle.stackConfig[key]?.value ?? "",
    },
  });
  client = partnerClient(handle);
  prices = await monthlyPrices();
});

afterAll(async () => {
  await handle?.emulator.close();
});

/** One of the named happenings, or none. */
const oneOf = (named: Record<string, unknown> = {}) => fc.constantFrom(undefined, ...Object.keys(named));

describe("an update records every output its preview shows known, and its preview shows every output it keeps", () => {
  for (const [name, updateCase] of Object.entries(CASES)) {
    it(name, async () => {
      const typeName = name[0]?.toUpperCase() + name.slice(1);
      await fc.assert(
        fc.asyncProperty(
          updateCase.changes,
          oneOf(updateCase.recorded),
          oneOf(updateCase.meanwhile),
          async (change, recordedAs, happened) => {
            // A fresh service each run: it keeps at most five webhooks an owner.
            await handle.control("POST", "/reset");
            const declared = await updateCase.declared();
            const { id, outs } = await created(typeName, declared);
            const olds = { ...outs, ...(recordedAs ? updateCase.recorded?.[recordedAs]?.(outs) : {}) };
            const moved = happened ? await updateCase.meanwhile?.[happened]?.(id, outs) : undefined;
            const given = Object.entries({ ...declared, ...((await updateCase.made?.(change, declared)) ?? change) });
            const checked = await host.check(
              typeName,
              olds,
              Object.fromEntries(given.filter(([, v]) => v !== undefined)),
            );
            expect(checked.failures ?? []).toEqual([]);
            const news = checked.inputs as Props;
            expect((await host.diff(typeName, id, olds, news)).replaces).toEqual([]);
            const previewed = host.previewUpdate(typeName, olds, news);
            const updated = (await host.update(typeName, id, olds, news)).outs as Props;
            expect(asPreviewed(updated, previewed)).toEqual(previewed);
            const kept = unknownButKept(previewed, { olds, service: { ...outs, ...moved }, updated });
            expect(kept, "outputs the update kept, which the preview showed unknown").toEqual([]);
          },
        ),
        { numRuns: 25 },
      );
    });
  }
});
