import { readFileSync } from "node:fs";
import { join } from "node:path";
import { InventoryError, parseInventory } from "pulumi-dmarc-partner";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";

// The inventory parser alone: what a valid file becomes, and the one line
// each kind of invalid entry stops the preview with.

type Entry = Record<string, unknown>;

const globex: Entry = { name: "Globex", group: "All domains", plan: "Starter", domains: [{ name: "globex.example" }] };
const acme: Entry = {
  name: "Acme",
  group: "Production",
  plan: "Business",
  frequency: "yearly",
  domains: [{ name: "acme.example" }, { name: "acme-old.example", type: "parked" }],
  admins: ["it@acme.example"],
  webhooks: [{ name: "events", url: "https://hooks.acme.example/dmarc", events: ["domain.verified"] }],
};

/** An inventory of Globex and Acme (tenants[1]), with Acme's entry changed by `change`. */
function withAcme(change: (tenant: Entry) => void): string {
  const tenant = structuredClone(acme);
  change(tenant);
  return stringify({ tenants: [globex, tenant] });
}

function problemsOf(text: string): readonly string[] {
  try {
    parseInventory(text);
  } catch (error) {
    expect(error).toBeInstanceOf(InventoryError);
    return (error as InventoryError).problems;
  }
  throw new Error("the inventory was accepted");
}

const ACME = 'tenants.yaml: tenant "Acme" (tenants[1])';

describe("a valid inventory", () => {
  it("reads the example's tenants.yaml with its defaults filled in", () => {
    const inventory = parseInventory(
      readFileSync(join(__dirname, "..", "..", "examples", "tenants-yaml", "tenants.yaml"), "utf8"),
    );
    expect(inventory.tenants.map((tenant) => tenant.key)).toEqual(["acme-corp", "globex"]);
    const [acmeCorp, globexCorp] = inventory.tenants;
    expect(acmeCorp).toMatchObject({
      name: "Acme Corp",
      label: 'tenant "Acme Corp" (tenants[0])',
      group: "Production",
      plan: "Business",
      frequency: "yearly",
      domains: [
        { name: "acme.example", type: "sending" },
        { name: "mail.acme.example", type: "sending" },
        { name: "acme-old.example", type: "parked" },
      ],
      admins: ["it@acme.example"],
      webhooks: [
        {
          name: "acme-dmarc-events",
          url: "https://hooks.acme.example/dmarc",
          events: ["domain.verified", "report.received"],
        },
      ],
    });
    expect(globexCorp).toMatchObject({ frequency: "monthly", webhooks: [] });
    expect(globexCorp?.currency).toBeUndefined();
  });

  it("derives resource keys from names, dropping accents and punctuation, unless a key is given", () => {
    const text = stringify({
      tenants: [
        { ...globex, name: "Café Müller & Söhne GmbH", domains: [] },
        { ...globex, name: "Renamed Globex", key: "globex", domains: [] },
      ],
    });
    expect(parseInventory(text).tenants.map((tenant) => tenant.key)).toEqual(["cafe-muller-sohne-gmbh", "globex"]);
  });

  it("accepts an empty list of tenants", () => {
    expect(parseInventory("tenants: []\n").tenants).toEqual([]);
  });

  it("names the file it was given in messages", () => {
    expect(() => parseInventory("tenants: 3\n", "inventories/eu.yaml")).toThrow(
      "inventories/eu.yaml: tenants: must be a list; got 3",
    );
  });
});

describe("the defaults block and moving in", () => {
  const text = stringify({
    defaults: { group: "Main", plan: "Starter", frequency: "yearly", onDelete: "cancelSubscriptions" },
    tenants: [
      {
        name: "Acme",
        plan: "Business",
        ids: { organization: "org_1", domains: { "acme.example": "org_1/acme.example" } },
      },
      { name: "Globex", onDelete: "keep" },
    ],
  });

  it("gives every tenant the defaults it does not set itself", () => {
    const [acmeTenant, globexTenant] = parseInventory(text).tenants;
    expect(acmeTenant).toMatchObject({
      group: "Main",
      plan: "Business",
      frequency: "yearly",
      onDelete: "cancelSubscriptions",
    });
    expect(globexTenant).toMatchObject({ group: "Main", plan: "Starter", onDelete: "keep" });
  });

  it("keeps the ids of existing objects for the tenant to adopt", () => {
    expect(parseInventory(text).tenants[0]?.ids).toEqual({
      organization: "org_1",
      domains: { "acme.example": "org_1/acme.example" },
    });
  });

  it("names a tenant that lacks a value the defaults do not give either", () => {
    expect(problemsOf(stringify({ defaults: { group: "Main" }, tenants: [{ name: "Acme" }] }))).toEqual([
      'tenants.yaml: tenant "Acme" (tenants[0]) plan: is required unless subscription is none',
    ]);
  });

  it("refuses an unknown key in the defaults", () => {
    expect(problemsOf(stringify({ defaults: { domains: [] }, tenants: [] }))).toEqual([
      "tenants.yaml: defaults.domains: is not a known key (known: group, plan, frequency, currency, subscription, onDelete, dns, policy)",
    ]);
  });

  it("refuses an unknown kind of id", () => {
    expect(problemsOf(stringify({ tenants: [{ ...globex, ids: { org: "org_1" } }] }))).toEqual([
      'tenants.yaml: tenant "Globex" (tenants[0]) ids.org: is not a known key (known: organization, group, groups, subscription, domains, admins, webhooks)',
    ]);
  });
});

describe("an invalid entry stops with one line naming the tenant and the key", () => {
  const cases: [string, (tenant: Entry) => void, string][] = [
    [
      "a domain name in capitals",
      (tenant) => {
        tenant.domains = [{ name: "Acme.COM" }];
      },
      `${ACME} domain Acme.COM (domains[0]) name: must be a lower-case domain name such as example.com (letters, digits and hyphens, no trailing dot); got "Acme.COM"`,
    ],
    [
      "a domain of an unknown type",
      (tenant) => {
        tenant.domains = [{ name: "acme.example", type: "mailing" }];
      },
      `${ACME} domain acme.example (domains[0]) type: must be one of "sending", "parked"; got "mailing"`,
    ],
    [
      "a domain without a name",
      (tenant) => {
        tenant.domains = [{ type: "parked" }];
      },
      `${ACME} domains[0].name: is required`,
    ],
    [
      "domains given as one string",
      (tenant) => {
        tenant.domains = "acme.example";
      },
      `${ACME} domains: must be a list; got "acme.example"`,
    ],
    [
      "an admin that is not an e-mail address",
      (tenant) => {
        tenant.admins = ["it@acme.example", "Acme IT"];
      },
      `${ACME} admins[1]: must be an e-mail address such as admin@example.com; got "Acme IT"`,
    ],
    [
      "an admin listed twice",
      (tenant) => {
        tenant.admins = ["it@acme.example", "it@acme.example"];
      },
      `${ACME} admins[1]: is listed already, at admins[0]; got "it@acme.example"`,
    ],
    [
      "a webhook on plain http",
      (tenant) => {
        tenant.webhooks = [{ name: "events", url: "http://hooks.acme.example/dmarc", events: ["domain.verified"] }];
      },
      `${ACME} webhooks[0].url: must be an https:// URL (plain http:// only for loopback hosts such as 127.0.0.1); got "http://hooks.acme.example/dmarc"`,
    ],
    [
      "a webhook event the service does not send",
      (tenant) => {
        tenant.webhooks = [
          { name: "events", url: "https://hooks.acme.example", events: ["domain.verified", "domain.deleted"] },
        ];
      },
      `${ACME} webhooks[0].events[1]: must be one of "domain.created", "domain.verified", "report.received"; got "domain.deleted"`,
    ],
    [
      "a webhook without events",
      (tenant) => {
        tenant.webhooks = [{ name: "events", url: "https://hooks.acme.example", events: [] }];
      },
      `${ACME} webhooks[0].events: must list at least one event; got []`,
    ],
    [
      "two webhooks of one name",
      (tenant) => {
        const hook = { name: "events", url: "https://hooks.acme.example", events: ["report.received"] };
        tenant.webhooks = [hook, hook];
      },
      `${ACME} webhooks[1].name: is listed already, at webhooks[0].name; got "events"`,
    ],
    [
      "more webhooks than an organisation may have",
      (tenant) => {
        tenant.webhooks = Array.from({ length: 6 }, (_, i) => ({
          name: `hook-${i}`,
          url: `https://hooks.acme.example/${i}`,
          events: ["domain.verified"],
        }));
      },
      `${ACME} webhooks: must list at most 5 webhooks, the service's limit per organisation; got [{"name":"hook-0","url":"https://hooks.a…ample/5","events":["domain.verified"]}]`,
    ],
    [
      "a webhook name padded with white space, which its Webhook would refuse",
      (tenant) => {
        tenant.webhooks = [{ name: "events ", url: "https://hooks.acme.example", events: ["report.received"] }];
      },
      `${ACME} webhooks[0].name: must not start or end with white space; got "events "`,
    ],
    [
      "a group name padded with white space, which its DomainGroup would refuse",
      (tenant) => {
        tenant.group = " Production";
      },
      `${ACME} group: must not start or end with white space; got " Production"`,
    ],
    [
      "no group",
      (tenant) => {
        delete tenant.group;
      },
      `${ACME} group: is required`,
    ],
    [
      "an empty plan",
      (tenant) => {
        tenant.plan = "";
      },
      `${ACME} plan: must name a plan of the partner's catalogue, such as Business; got ""`,
    ],
    [
      "a billing frequency the catalogue does not have",
      (tenant) => {
        tenant.frequency = "weekly";
      },
      `${ACME} frequency: must be one of "monthly", "yearly", "daily"; got "weekly"`,
    ],
    [
      "an unknown currency",
      (tenant) => {
        tenant.currency = "CHF";
      },
      `${ACME} currency: must be one of "USD", "EUR", "GBP"; got "CHF"`,
    ],
    [
      "a misspelt key",
      (tenant) => {
        tenant.domain = tenant.domains;
        delete tenant.domains;
      },
      `${ACME} domain: is not a known key (known: name, key, group, groups, plan, subscription, frequency, currency, domains, admins, webhooks, onDelete, dns, policy, ids)`,
    ],
    [
      "a misspelt key inside a domain",
      (tenant) => {
        tenant.domains = [{ name: "acme.example", kind: "parked" }];
      },
      `${ACME} domain acme.example (domains[0]) kind: is not a known key (known: name, type, setupRecordType, zone, group, verify, dns, policy)`,
    ],
    [
      "a key that is not lower-case words joined by hyphens",
      (tenant) => {
        tenant.key = "Acme_Corp";
      },
      `${ACME} key: must be lower-case letters and digits in words joined by hyphens, such as acme-corp; got "Acme_Corp"`,
    ],
    [
      "a name too long for the service",
      (tenant) => {
        tenant.name = "A".repeat(129);
      },
      `tenants.yaml: tenant "${"A".repeat(129)}" (tenants[1]) name: must be at most 128 characters; got "${"A".repeat(39)}…${"A".repeat(38)}"`,
    ],
    [
      "a name with nothing to derive a resource name from",
      (tenant) => {
        tenant.name = "***";
      },
      `tenants.yaml: tenant "***" (tenants[1]) name: gives no resource name (it has no letters or digits): set key; got "***"`,
    ],
    [
      "a name giving the same resource name as another tenant's",
      (tenant) => {
        tenant.name = "GLOBEX";
      },
      `tenants.yaml: tenant "GLOBEX" (tenants[1]) name: gives the resource name "globex", as tenants[0] does: set a different key; got "GLOBEX"`,
    ],
    [
      "the organisation name of another tenant, under a key of its own",
      (tenant) => {
        tenant.name = "Globex";
        tenant.key = "globex-eu";
      },
      `tenants.yaml: tenant "Globex" (tenants[1]) name: is the name of tenants[0] too: give two customers different names, or list one customer once; got "Globex"`,
    ],
    [
      "a key another tenant's name gives already",
      (tenant) => {
        tenant.key = "globex";
      },
      `${ACME} key: gives the resource name "globex", as tenants[0] does: set a different key; got "globex"`,
    ],
    [
      "a domain another tenant lists",
      (tenant) => {
        tenant.domains = [{ name: "acme.example" }, { name: "globex.example" }];
      },
      `${ACME} domain globex.example (domains[1]) name: is listed already, under tenant "Globex" (tenants[0]); got "globex.example"`,
    ],
    [
      "no name",
      (tenant) => {
        delete tenant.name;
      },
      "tenants.yaml: tenants[1] name: is required",
    ],
    [
      "a subscription state that does not exist",
      (tenant) => {
        tenant.subscription = "paused";
      },
      `${ACME} subscription: must be one of "active", "suspended", "none"; got "paused"`,
    ],
    [
      "a suspended subscription with no id to adopt",
      (tenant) => {
        tenant.subscription = "suspended";
      },
      `${ACME} subscription: keeps an existing cancelled subscription cancelled: set ids.subscription to its id; got "suspended"`,
    ],
    [
      "no subscription, but the id of one",
      (tenant) => {
        tenant.subscription = "none";
        tenant.ids = { subscription: "org_1/sub_1" };
      },
      `${ACME} ids.subscription: names a subscription, but subscription is none; got "org_1/sub_1"`,
    ],
    [
      "a domain in a group the tenant does not have",
      (tenant) => {
        tenant.groups = ["Europe"];
        tenant.domains = [{ name: "acme.example", group: "Asia" }];
      },
      `${ACME} domain acme.example (domains[0]) group: must be the tenant's group or one of its groups ("Production", "Europe"); got "Asia"`,
    ],
    [
      "a further group that is the tenant's group",
      (tenant) => {
        tenant.groups = ["Production"];
      },
      `${ACME} groups[0]: is the tenant's group already; got "Production"`,
    ],
    [
      "a further group listed twice",
      (tenant) => {
        tenant.groups = ["Europe", "Europe"];
      },
      `${ACME} groups[1]: is listed already, at groups[0]; got "Europe"`,
    ],
  ];

  it("takes every state of an organisation: no subscription, a suspended one, several groups", () => {
    const inventory = parseInventory(
      withAcme((tenant) => {
        delete tenant.plan;
        tenant.subscription = "none";
        tenant.groups = ["Europe"];
        tenant.domains = [{ name: "acme.example" }, { name: "acme.example.eu", group: "Europe", type: "parked" }];
      }),
    );
    const acme = inventory.tenants[1];
    expect([acme?.subscription, acme?.plan, acme?.groups]).toEqual(["none", undefined, ["Europe"]]);
    expect(acme?.domains[1]?.group).toBe("Europe");
  });

  it.each(cases)("%s", (_, change, message) => {
    expect(problemsOf(withAcme(change))).toEqual([message]);
  });

  it("points at a tenant entry that is not a mapping", () => {
    expect(problemsOf(stringify({ tenants: [globex, "Acme"] }))).toEqual([
      'tenants.yaml: tenants[1]: must be a mapping; got "Acme"',
    ]);
  });

  it("refuses a file without tenants", () => {
    expect(problemsOf("")).toEqual(["tenants.yaml: must be a mapping; got null"]);
    expect(problemsOf("tenant: []\n")).toEqual([
      "tenants.yaml: tenants: is required",
      "tenants.yaml: tenant: is not a known key (known: defaults, tenants, offboard)",
    ]);
  });

  it("reports every problem at once, one line each", () => {
    const text = withAcme((tenant) => {
      tenant.domains = [{ name: "Acme.COM" }];
      tenant.admins = ["Acme IT"];
    });
    expect(problemsOf(text)).toEqual([
      `${ACME} domain Acme.COM (domains[0]) name: must be a lower-case domain name such as example.com (letters, digits and hyphens, no trailing dot); got "Acme.COM"`,
      `${ACME} admins[0]: must be an e-mail address such as admin@example.com; got "Acme IT"`,
    ]);
    expect(() => parseInventory(text)).toThrow(problemsOf(text).join("\n"));
  });

  it("gives the line and column of a YAML syntax error", () => {
    expect(problemsOf("tenants:\n  - name: Acme\n    name: Acme Corp\n")).toEqual([
      "tenants.yaml: line 3, column 5: Map keys must be unique",
    ]);
  });
});

describe("the offboard: section (tombstones)", () => {
  it("reads each approved offboarding with its note and date, and none when the section is absent", () => {
    const text = [
      stringify({ tenants: [globex] }),
      "offboard:",
      "  - key: acme",
      "    note: contract ended, ticket OPS-1234",
      "    date: 2026-11-30",
      "  - key: initech",
      "",
    ].join("\n");
    expect(parseInventory(text).offboard).toEqual([
      { key: "acme", note: "contract ended, ticket OPS-1234", date: "2026-11-30" },
      { key: "initech" },
    ]);
    expect(parseInventory(stringify({ tenants: [globex] })).offboard).toEqual([]);
  });

  it("refuses a tombstone of a tenant the file still lists, one listed twice, a bad key or date, and an unknown key", () => {
    const text = stringify({
      tenants: [globex],
      offboard: [
        { key: "globex" },
        { key: "acme" },
        { key: "acme" },
        { key: "Acme Corp" },
        { key: "x", date: "30.11.2026", reason: "x" },
      ],
    });
    expect(problemsOf(text)).toEqual([
      'tenants.yaml: offboard[3].key: must be lower-case letters and digits in words joined by hyphens, such as acme-corp; got "Acme Corp"',
      'tenants.yaml: offboard[4].date: must be a date as YYYY-MM-DD, such as 2026-11-30; got "30.11.2026"',
      "tenants.yaml: offboard[4].reason: is not a known key (known: key, note, date)",
      'tenants.yaml: offboard[2].key: is listed already, at offboard[1].key; got "acme"',
      'tenants.yaml: offboard[0].key: is the key of tenant "Globex" (tenants[0]), which the file still lists: remove the tenant\'s entry to offboard it, or this tombstone to keep it; got "globex"',
    ]);
  });
});

// The `dns` section: how each domain's record is published, with the key's secret kept out of the file.
const publishing = {
  rfc2136: { server: "ns1.acme.net:53", keyName: "dmarc-update", keySecretEnv: "DNS_KEY_SECRET" },
};

const FIRST_ACME = 'tenants.yaml: tenant "Acme" (tenants[0])';

describe("the inventory's dns section", () => {
  it("takes the defaults' publishing, a tenant's own, and a domain's none", () => {
    const inventory = parseInventory(
      stringify({
        defaults: { group: "Production", plan: "Business", dns: publishing },
        tenants: [
          { name: "Acme", domains: [{ name: "acme.example" }, { name: "elsewhere.example", dns: "none" }] },
          { name: "Globex", dns: "none", domains: [{ name: "globex.example" }] },
        ],
      }),
    );
    const [acme, globex] = inventory.tenants;
    expect(acme?.dns).toEqual(publishing);
    expect(acme?.domains[1]?.dns).toBe("none");
    expect(globex?.dns).toBe("none");
  });

  it("refuses the key's secret in the file, a refused algorithm, a zone without the domain and a bad variable name", () => {
    const problems = problemsOf(
      stringify({
        tenants: [
          {
            name: "Acme",
            group: "G",
            plan: "Business",
            dns: {
              rfc2136: { ...publishing.rfc2136, keySecret: "c2VjcmV0c2VjcmV0c2VjcmV0", keyAlgorithm: "hmac-md5" },
            },
            domains: [
              { name: "acme.example" },
              { name: "other.example", dns: { rfc2136: { ...publishing.rfc2136, zone: "acme.example" } } },
              { name: "third.example", dns: { rfc2136: { ...publishing.rfc2136, keySecretEnv: "lower case" } } },
            ],
          },
        ],
      }),
    );
    expect(problems).toHaveLength(4);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringContaining(`${FIRST_ACME} dns.rfc2136.keyAlgorithm: is refused: MD5 is broken`),
        `${FIRST_ACME} dns.rfc2136.keySecret: is not a known key (known: server, zone, keyName, keyAlgorithm, ttl, keySecretEnv)`,
        `${FIRST_ACME} domain other.example (domains[1]) dns.rfc2136.zone: must contain other.example, whose record it publishes; got "acme.example"`,
        expect.stringContaining(
          `${FIRST_ACME} domain third.example (domains[2]) dns.rfc2136.keySecretEnv: must be an environment variable's name`,
        ),
      ]),
    );
    expect(problems.join("\n")).not.toContain("c2VjcmV0c2VjcmV0c2VjcmV0");
  });

  it("takes a publisher module beside the file, and refuses a path that is not a CommonJS module's", () => {
    const inventory = parseInventory(
      stringify({
        defaults: { group: "G", plan: "Business", dns: { publisher: "./publish.js" } },
        tenants: [{ name: "Acme", domains: [{ name: "acme.example" }] }],
      }),
      "tenants.yaml",
      "/srv/fleet",
    );
    expect([inventory.folder, inventory.tenants[0]?.dns]).toEqual(["/srv/fleet", { publisher: "./publish.js" }]);
    const problems = problemsOf(
      stringify({ tenants: [{ name: "Acme", group: "G", plan: "Business", dns: { publisher: "./publish.ts" } }] }),
    );
    expect(problems).toEqual([
      `${FIRST_ACME} dns.publisher: must be a CommonJS module's path ending in .js or .cjs, such as ./publish.js; got "./publish.ts"`,
    ]);
  });
});
