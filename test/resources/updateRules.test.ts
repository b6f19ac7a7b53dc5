import fc from "fast-check";
import { dynamicProviderHost as host, type resourceDefinitions } from "pulumi-dmarc-partner";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, partnerClient, startTestEmulator } from "../support/emulator";
import { asPreviewed } from "../support/previewed";

// Each type's update held to its preview, in process against the emulator:
// random in-place changes of a new object's inputs (from the state a create,
// or a refresh after it, recorded, and with the service moved on since or
// not), and every output the preview shows known,
// at any depth, is what the update records; nothing such a change makes is a
// replacement. The preview and `update` read the same rule of the definition
// (`updatedBy`); this is where the two are held together.

type Props = Record<string, unknown>;

/** One type's in-place updates. */
interface UpdateCase {
  /** A new object's declaration, with what it depends on made first. */
  declared(): Promise<Props>;
  /** Changes of the inputs it updates in place; an input changed to undefined is left out. */
  changes: fc.Arbitrary<Props>;
  /** What a refresh may have recorded since the create (the service's state then, not now). */
  refreshed?: fc.Arbitrary<Props>;
  /** What may happen on the service after the last read, to the object or around it. */
  meanwhile?(id: string, outs: Props): Promise<void>;
  /** The change as inputs, with what it names made first. */
  made?(change: Props, declared: Props): Promise<Props>;
}

let handle: EmulatorHandle;
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
  },
  domainGroup: {
    declared: async () => ({ organizationId: await organization(), name: unique("group ") }),
    changes: fc.record({ name: displayNames.map((name) => unique(`${name} `)) }, { requiredKeys: [] }),
    // A domain joins the group.
    meanwhile: async (id, outs) => {
      const groupId = id.split("/")[1];
      await created("Domain", { organizationId: outs.organizationId, domain: `${unique("j")}.acme.example`, groupId });
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
    meanwhile: (_id, outs) => verify(outs),
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
    // A refresh before the service verified the domain again: the next update waits for it.
    refreshed: fc.constantFrom({}, { verified: false }),
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
    made: async (change) =>
      typeof change.priceId === "number" ? { ...change, priceId: prices[change.priceId % prices.length] } : change,
  },
  invitation: {
    declared: async () => ({ organizationId: await organization(), email: `${unique("user")}@acme.example` }),
    changes: fc.record(
      { redirectUrl: fc.constantFrom(undefined, "https://app.acme.example/welcome", "https://acme.example/") },
      { requiredKeys: [] },
    ),
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
  prices = await monthlyPrices();
});

afterAll(async () => {
  await handle?.emulator.close();
});

describe("an update records every output its preview shows known", () => {
  for (const [name, updateCase] of Object.entries(CASES)) {
    it(name, async () => {
      const typeName = name[0]?.toUpperCase() + name.slice(1);
      await fc.assert(
        fc.asyncProperty(
          updateCase.changes,
          updateCase.refreshed ?? fc.constant({}),
          fc.boolean(),
          async (change, refreshed, moved) => {
            // A fresh service each run: it keeps at most five webhooks an owner.
            await handle.control("POST", "/reset");
            const declared = await updateCase.declared();
            const { id, outs } = await created(typeName, declared);
            const olds = { ...outs, ...refreshed };
            if (moved) await updateCase.meanwhile?.(id, outs);
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
          },
        ),
        { numRuns: 25 },
      );
    });
  }
});
