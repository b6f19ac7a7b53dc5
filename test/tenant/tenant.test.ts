import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import type { api } from "pulumi-dmarc-partner";
import {
  checkPlans,
  declareTenants,
  InventoryError,
  parseInventory,
  TENANT_TYPE,
  Tenant,
  TenantError,
} from "pulumi-dmarc-partner";
import { beforeAll, describe, expect, it } from "vitest";

// The example's tenants.yaml turned into Tenant components, under Pulumi's
// mocks: which resources are declared, by which names, and wired to what.

const DMARC = "pulumi-nodejs:dynamic/dmarc";
const declared: pulumi.runtime.MockResourceArgs[] = [];

/**
 * What the service would answer for the package's resources: the id, which
 * some outputs derive from (`organizationId`, `groupId`), and outputs beyond the inputs.
 */
const service: Record<
  string,
  (args: pulumi.runtime.MockResourceArgs) => { id: string; outputs?: Record<string, unknown> }
> = {
  [`${DMARC}:Organization`]: (args) => ({ id: `org-${args.name}` }),
  [`${DMARC}:DomainGroup`]: (args) => ({ id: `${args.inputs.organizationId}/group-${args.name}` }),
  [`${DMARC}:Subscription`]: (args) => ({
    id: `${args.inputs.organizationId}/sub_1`,
    outputs: { subscriptionId: "sub_1", status: "active" },
  }),
  [`${DMARC}:Domain`]: (args) => ({
    id: `${args.inputs.organizationId}/${args.inputs.domain}`,
    outputs: {
      setupRecord: {
        host: `_dmarc.${args.inputs.domain}`,
        name: "_dmarc",
        zone: args.inputs.domain,
        type: "txt",
        recordType: "TXT",
        value: "v=DMARC1; p=none",
      },
    },
  }),
};

beforeAll(() => {
  pulumi.runtime.setMocks(
    {
      newResource(args) {
        declared.push(args);
        const answer = service[args.type]?.(args) ?? { id: `${args.name}-id` };
        return { id: answer.id, state: { ...args.inputs, ...answer.outputs } };
      },
      call(args) {
        return args.inputs;
      },
    },
    "dmarc-tenants-example",
    "test",
    false,
  );
});

function plan(name: string, prices: [frequency: "m" | "y", currency: "USD" | "EUR"][]): api.Plan {
  const at = "2025-01-01T00:00:00Z";
  return {
    id: `plan_${name.toLowerCase()}`,
    name,
    features: { domainCount: 10, emailVolumeCount: 1000, dataRetentionDays: 30, alerting: false, apiAccess: false },
    prices: prices.map(([frequency, currency]) => ({
      id: `price_${name.toLowerCase()}_${frequency}_${currency.toLowerCase()}`,
      name: `${name} ${frequency}`,
      amount: 10,
      currency,
      frequency,
      billingPeriod: 1,
      createdAt: at,
      updatedAt: at,
    })),
    createdAt: at,
    updatedAt: at,
  };
}

const catalogue = [
  plan("Starter", [
    ["m", "USD"],
    ["y", "USD"],
  ]),
  plan("Business", [
    ["m", "USD"],
    ["y", "USD"],
    ["y", "EUR"],
  ]),
];

function settled<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => output.apply(resolve));
}

function inputsOf(type: string, name: string): Record<string, unknown> | undefined {
  return declared.find((args) => args.type === `${DMARC}:${type}` && args.name === name)?.inputs;
}

describe("declareTenants on the example's tenants.yaml", () => {
  beforeAll(async () => {
    const inventory = parseInventory(
      readFileSync(join(__dirname, "..", "..", "examples", "tenants-yaml", "tenants.yaml"), "utf8"),
    );
    // Acme Corp pays yearly for Business, which has a USD and a EUR yearly price: the file would need a currency.
    const single = catalogue.map((entry) => ({
      ...entry,
      prices: entry.prices.filter((price) => price.currency === "USD"),
    }));
    const tenants = declareTenants(inventory, { plans: Promise.resolve(single) });
    await Promise.all(
      tenants.flatMap((tenant) => [
        ...(tenant.subscription ? [settled(tenant.subscription.id)] : []),
        ...Object.values(tenant.domains).map((entry) => settled(entry.domain.id)),
        ...Object.values(tenant.invitations).map((invitation) => settled(invitation.id)),
        ...Object.values(tenant.webhooks).map((webhook) => settled(webhook.id)),
      ]),
    );
  });

  it("declares one component per tenant, named by its key", () => {
    expect(declared.filter((args) => args.type === TENANT_TYPE).map((args) => args.name)).toEqual([
      "acme-corp",
      "globex",
    ]);
  });

  it("declares every resource under names derived from the tenant and what it is", () => {
    const names = declared
      .filter((args) => args.type.startsWith(DMARC))
      .map((args) => `${args.type.slice(DMARC.length + 1)} ${args.name}`)
      .sort();
    expect(names).toEqual(
      [
        "Organization acme-corp",
        "DomainGroup acme-corp/group",
        "Subscription acme-corp/subscription",
        "Invitation acme-corp/admin/it@acme.example",
        "Webhook acme-corp/webhook/acme-dmarc-events",
        "Domain acme.example",
        "Domain mail.acme.example",
        "Domain acme-old.example",
        "Organization globex",
        "DomainGroup globex/group",
        "Subscription globex/subscription",
        "Invitation globex/admin/admin@globex.example",
        "Invitation globex/admin/security@globex.example",
        "Domain globex.example",
      ].sort(),
    );
  });

  it("creates each organisation under the tenant's name", () => {
    expect(inputsOf("Organization", "acme-corp")).toMatchObject({ name: "Acme Corp" });
    expect(inputsOf("Organization", "globex")).toMatchObject({ name: "Globex" });
  });

  it("subscribes each tenant to the price of its plan and frequency", () => {
    expect(inputsOf("Subscription", "acme-corp/subscription")).toMatchObject({
      organizationId: "org-acme-corp",
      priceId: "price_business_y_usd",
    });
    expect(inputsOf("Subscription", "globex/subscription")).toMatchObject({
      organizationId: "org-globex",
      priceId: "price_starter_m_usd",
    });
  });

  it("puts each domain in its tenant's organisation and group, with its type", () => {
    expect(inputsOf("DomainGroup", "globex/group")).toMatchObject({
      organizationId: "org-globex",
      name: "All domains",
    });
    expect(inputsOf("Domain", "acme.example")).toMatchObject({
      organizationId: "org-acme-corp",
      domain: "acme.example",
      type: "sending",
      groupId: "group-acme-corp/group",
    });
    expect(inputsOf("Domain", "acme-old.example")).toMatchObject({ type: "parked" });
    expect(inputsOf("Domain", "globex.example")).toMatchObject({
      organizationId: "org-globex",
      groupId: "group-globex/group",
    });
  });

  it("invites each admin as an administrator of the tenant's organisation", () => {
    expect(inputsOf("Invitation", "globex/admin/security@globex.example")).toMatchObject({
      organizationId: "org-globex",
      email: "security@globex.example",
      role: "admin",
    });
  });

  it("registers each webhook with the tenant's organisation as its owner", () => {
    expect(inputsOf("Webhook", "acme-corp/webhook/acme-dmarc-events")).toMatchObject({
      name: "acme-dmarc-events",
      url: "https://hooks.acme.example/dmarc",
      events: ["domain.verified", "report.received"],
      ownerId: "org-acme-corp",
    });
  });
});

describe("checkPlans", () => {
  const inventory = parseInventory(
    "tenants:\n  - { name: Acme, group: Main, plan: Business, frequency: yearly }\n  - { name: Initech, group: Main, plan: Gold }\n",
  );

  it("names the file, the tenant and its plan for every plan the catalogue cannot price, at once", () => {
    let error: unknown;
    try {
      checkPlans(inventory, catalogue);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(InventoryError);
    expect((error as InventoryError).problems).toEqual([
      'tenants.yaml: tenant "Acme" (tenants[0]) plan: Plan "Business" has 2 yearly prices (USD, EUR); name the currency',
      'tenants.yaml: tenant "Initech" (tenants[1]) plan: No plan named "Gold" in the partner\'s catalogue; available: "Starter" (monthly USD, yearly USD); "Business" (monthly USD, yearly USD, yearly EUR)',
    ]);
  });

  it("accepts an inventory whose plans all have one price", () => {
    const priced = parseInventory(
      "tenants:\n  - { name: Acme, group: Main, plan: Business, currency: EUR, frequency: yearly }\n",
    );
    expect(() => checkPlans(priced, catalogue)).not.toThrow();
  });
});

/** Stands for a DNS provider's record resource. */
class DnsRecord extends pulumi.CustomResource {
  constructor(name: string, props: { value: pulumi.Input<string> }, opts?: pulumi.CustomResourceOptions) {
    super("dns:index:Record", name, props, opts);
  }
}

describe("a Tenant moving in and publishing its records", () => {
  const records: string[] = [];
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = new Tenant("initech", {
      name: "Initech",
      group: "Main",
      plan: { name: "Starter" },
      domains: [{ name: "initech.example" }],
      webhooks: [{ name: "events", url: "https://hooks.initech.example/", events: ["domain.created"] }],
      existingIds: { organization: "org_7", domains: { "initech.example": "org_7/initech.example" } },
      plans: Promise.resolve(catalogue),
      publishRecord: (record, domain, opts) => {
        records.push(domain.urn ? "declared" : "missing");
        return new DnsRecord("dns/initech.example", { value: record.value }, opts);
      },
    });
    await Promise.all([settled(tenant.ids), settled(tenant.records)]);
  });

  it("adopts the objects it is given ids of, and creates the rest", () => {
    expect(inputsOf("Organization", "initech")).toMatchObject({ name: "Initech", importId: "org_7" });
    expect(inputsOf("Domain", "initech.example")).toMatchObject({ importId: "org_7/initech.example" });
    expect(inputsOf("DomainGroup", "initech/group")).not.toHaveProperty("importId");
  });

  it("hands each domain's record to the DNS hook, whose resource gets the record's value", () => {
    expect(records).toEqual(["declared"]);
    const dns = declared.find((args) => args.type === "dns:index:Record");
    expect(dns?.inputs).toEqual({ value: "v=DMARC1; p=none" });
  });

  it("outputs every object's id in the shape it adopts them from", async () => {
    expect(await settled(tenant.ids)).toEqual({
      organization: "org-initech",
      group: "org-initech/group-initech/group",
      subscription: "org-initech/sub_1",
      domains: { "initech.example": "org-initech/initech.example" },
      admins: {},
      webhooks: { events: "initech/webhook/events-id" },
    });
  });

  it("waits for the service to verify a domain that asks for it, after its published record", async () => {
    const umbrella = new Tenant("umbrella", {
      name: "Umbrella",
      group: "Main",
      plan: { name: "Starter" },
      domains: [{ name: "umbrella.example", verify: true }, { name: "quiet.umbrella.example" }],
      plans: Promise.resolve(catalogue),
      publishRecord: (record, _domain, opts) => new DnsRecord("dns/umbrella.example", { value: record.value }, opts),
    });
    const verification = umbrella.domains["umbrella.example"]?.verification;
    expect(verification).toBeDefined();
    expect(umbrella.domains["quiet.umbrella.example"]?.verification).toBeUndefined();
    if (verification) await settled(verification.urn);
    const verifications = declared.filter((args) => args.type === `${DMARC}:DomainVerification`);
    expect(verifications.map((args) => args.name)).toEqual(["umbrella.example/verification"]);
    expect(verifications[0]?.inputs).toMatchObject({
      domainId: "org-umbrella/umbrella.example",
      recordValue: "v=DMARC1; p=none",
    });
  });
});

describe("a Tenant's own declaration", () => {
  it("gives each Domain the settings its entry declares, and nothing of the tenant's", async () => {
    const hooli = new Tenant("hooli", {
      name: "Hooli",
      group: "Main",
      plan: { name: "Starter" },
      domains: [{ name: "mail.hooli.example", type: "parked", setupRecordType: "CNAME", zone: "hooli.example" }],
      plans: Promise.resolve(catalogue),
    });
    await settled(hooli.ids);
    const { __provider: _provider, ...inputs } = inputsOf("Domain", "mail.hooli.example") ?? {};
    expect(inputs).toEqual({
      organizationId: "org-hooli",
      domain: "mail.hooli.example",
      groupId: "group-hooli/group",
      type: "parked",
      setupRecordType: "CNAME",
      zone: "hooli.example",
      // How many domains the tenant declares: their creates wait for each other and go out as one batch.
      declaredTogether: 1,
    });
  });

  it("refuses a key that is not lower-case words and names every entry listed twice, at once", () => {
    const hook = { name: "events", url: "https://hooks.acme.example/", events: ["domain.created" as const] };
    let error: unknown;
    try {
      new Tenant("Acme_Corp", {
        name: "Acme",
        group: "Main",
        plan: { name: "Starter" },
        domains: [{ name: "acme.example" }, { name: "mail.acme.example" }, { name: "acme.example" }],
        admins: ["it@acme.example", "it@acme.example"],
        webhooks: [hook, hook],
        plans: Promise.resolve(catalogue),
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(TenantError);
    expect((error as TenantError).problems).toEqual([
      'tenant "Acme_Corp": key "Acme_Corp" must be lower-case letters and digits in words joined by hyphens',
      'tenant "Acme_Corp": domains[2] "acme.example" is listed already',
      'tenant "Acme_Corp": admins[1] "it@acme.example" is listed already',
      'tenant "Acme_Corp": webhooks[1] "events" is listed already',
    ]);
  });
});
