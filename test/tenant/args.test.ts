import * as pulumi from "@pulumi/pulumi";
import { Tenant, type TenantArgs, TenantError } from "pulumi-dmarc-partner";
import { beforeAll, describe, expect, it } from "vitest";

// A program's Tenant arguments checked at construction with the tenant's
// schema, as a JavaScript program (or a cast) may get them wrong: every key
// of the wrong type, an unknown key and a missing one refused in the
// inventory's words, every problem at once, before any resource is declared;
// a value given as an Output or a Promise checked once it is known.

const declared: pulumi.runtime.MockResourceArgs[] = [];

beforeAll(() => {
  pulumi.runtime.setMocks(
    {
      newResource(args) {
        declared.push(args);
        return { id: `${args.name}-id`, state: args.inputs };
      },
      call: (args) => args.inputs,
    },
    "tenant-args",
    "test",
    false,
  );
});

const VALID = { name: "Acme", group: "Main", subscription: "none" } as const;

/** The lines a Tenant is refused with at construction; none when it is accepted. */
function refusal(args: Record<string, unknown>): readonly string[] {
  try {
    new Tenant("acme", args as unknown as TenantArgs);
    return [];
  } catch (error) {
    if (error instanceof TenantError) return error.problems;
    throw error;
  }
}

describe("a Tenant's arguments, checked at construction", () => {
  it.each<[string, unknown, string]>([
    ["name", 42, "name: must be a string; got 42"],
    ["group", ["Main"], 'group: must be a string; got ["Main"]'],
    ["groups", "Europe", 'groups: must be a list; got "Europe"'],
    ["plan", "Business", 'plan: must be an object with name (and frequency, currency); got "Business"'],
    ["subscription", "paused", 'subscription: must be one of "active", "suspended", "none"; got "paused"'],
    ["domains", { name: "acme.example" }, 'domains: must be a list; got {"name":"acme.example"}'],
    ["admins", "it@acme.example", 'admins: must be a list; got "it@acme.example"'],
    ["webhooks", { name: "events" }, 'webhooks: must be a list; got {"name":"events"}'],
    ["onDelete", "forget", 'onDelete: must be one of "delete", "cancelSubscriptions", "keep"; got "forget"'],
    ["existingIds", "org_1", 'existingIds: must be a mapping; got "org_1"'],
    ["plans", "all", 'plans: must be a list; got "all"'],
    ["publishRecord", "cloudflare", 'publishRecord: must be a function; got "cloudflare"'],
    ["verifyDomain", true, "verifyDomain: must be a function; got true"],
    ["label", 7, "label: must be a string; got 7"],
  ])("refuses %s of the wrong type, naming the tenant, the key and the value", (key, value, problem) => {
    expect(refusal({ ...VALID, [key]: value })).toEqual([`tenant "acme" ${problem}`]);
  });

  it("refuses an unknown key naming the known ones, inside a plan too", () => {
    expect(refusal({ ...VALID, domain: [], plan: { name: "Business", frequncy: "yearly" } })).toEqual([
      'tenant "acme" plan.frequncy: is not a known key (known: name, frequency, currency)',
      'tenant "acme" domain: is not a known key (known: name, group, groups, plan, subscription, domains, admins, webhooks, onDelete, existingIds, plans, publishRecord, verifyDomain, label)',
    ]);
  });

  it("refuses every missing required key at once, the tenant's, a webhook's and a plan's", () => {
    expect(refusal({ plan: {}, webhooks: [{ name: "events" }], subscription: "active" })).toEqual([
      'tenant "acme" name: is required',
      'tenant "acme" group: is required',
      'tenant "acme" plan.name: is required',
      'tenant "acme" webhooks[0].url: is required',
      'tenant "acme" webhooks[0].events: is required',
    ]);
  });

  it("names a domain by its name inside the list, and its own keys' problems with the rest", () => {
    const domains = [{ name: "acme.example", verify: "yes", policy: { stage: "quarantine-50" } }, "mail.acme.example"];
    expect(refusal({ ...VALID, domains, admins: ["it"] })).toEqual([
      'tenant "acme" domain acme.example (domains[0]) verify: must be true or false; got "yes"',
      'tenant "acme" domain acme.example (domains[0]) policy.stage: must be one of the steps (none, quarantine-25, quarantine, reject); got "quarantine-50"',
      'tenant "acme" domains[1]: must be a mapping; got "mail.acme.example"',
      'tenant "acme" admins[0]: must be an e-mail address such as admin@example.com; got "it"',
    ]);
  });

  it("declares nothing of a refused tenant", () => {
    const before = declared.filter((args) => args.type !== "dmarc:index:Tenant").length;
    refusal({ ...VALID, plan: "Business" });
    expect(declared.filter((args) => args.type !== "dmarc:index:Tenant")).toHaveLength(before);
  });
});

describe("a Tenant's arguments known only later", () => {
  it("accepts Outputs and Promises of good values and declares the tenant", async () => {
    const tenant = new Tenant("later", {
      ...VALID,
      name: pulumi.output("Later Corp"),
      group: Promise.resolve("Main"),
      existingIds: { organization: pulumi.output("org_9") as unknown as string },
    });
    expect(await new Promise((resolve) => tenant.organizationId.apply(resolve))).toBe("later-id");
    const organization = declared.find((args) => args.name === "later" && args.type.endsWith(":Organization"));
    expect(organization?.inputs).toMatchObject({ name: "Later Corp", importId: "org_9" });
  });
});
