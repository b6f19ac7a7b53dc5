import { domainPolicyOf, InventoryError, parseInventory, recordWithStage } from "pulumi-dmarc-partner";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";

// The inventory's `policy` ramp: nearest wins key by key, the record takes
// the stage's tags and keeps every other, and each kind of bad ramp stops the
// preview with one line naming the file, tenant, domain, key and value.

const publishing = {
  rfc2136: { server: "127.0.0.1:53", zone: "acme.example", keyName: "fleet", keySecretEnv: "DNS_KEY" },
};

function inventoryOf(domains: Record<string, unknown>[], tenantPolicy?: Record<string, unknown>) {
  return stringify({
    defaults: { group: "G", plan: "Business", dns: publishing, policy: { target: "reject", floor: 85 } },
    tenants: [{ name: "Acme", domains, ...(tenantPolicy ? { policy: tenantPolicy } : {}) }],
  });
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

const ACME = 'tenants.yaml: tenant "Acme" (tenants[0])';

describe("a domain's ramp", () => {
  it("takes each key from the nearest of domain, tenant and defaults, evidence key by key", () => {
    const inventory = parseInventory(
      inventoryOf(
        [
          { name: "acme.example", policy: { stage: "quarantine-25", since: "2026-11-02", evidence: { minDays: 7 } } },
          { name: "mail.acme.example" },
          { name: "hosted.acme.example", setupRecordType: "CNAME" },
        ],
        { sp: "quarantine", evidence: { minMessages: 50 } },
      ),
    );
    const [tenant] = inventory.tenants;
    if (!tenant) throw new Error("no tenant");
    expect(domainPolicyOf(tenant, "acme.example")).toEqual({
      target: "reject",
      steps: [
        { p: "none", pct: 100 },
        { p: "quarantine", pct: 25 },
        { p: "quarantine", pct: 100 },
        { p: "reject", pct: 100 },
      ],
      evidence: { minPassRate: 98, minMessages: 50, minDays: 7 },
      floor: 85,
      sp: "quarantine",
      stage: { p: "quarantine", pct: 25 },
      since: "2026-11-02",
    });
    expect(domainPolicyOf(tenant, "mail.acme.example")?.stage).toEqual({ p: "none", pct: 100 });
    // A hosted record's policy is set in the service: an inherited ramp does not reach it.
    expect(domainPolicyOf(tenant, "hosted.acme.example")).toBeUndefined();
  });

  it("has none where the file gives none", () => {
    const inventory = parseInventory(
      stringify({ tenants: [{ name: "Acme", group: "G", plan: "Business", domains: [{ name: "acme.example" }] }] }),
    );
    expect(domainPolicyOf(inventory.tenants[0] as never, "acme.example")).toBeUndefined();
  });
});

describe("the record follows the stage", () => {
  const setup = "v=DMARC1; p=none; rua=mailto:org_1@rua.dmarc-emulator.test; fo=1";

  it.each([
    [{ p: "none", pct: 100 }, undefined, setup],
    [
      { p: "quarantine", pct: 25 },
      undefined,
      "v=DMARC1; p=quarantine; pct=25; rua=mailto:org_1@rua.dmarc-emulator.test; fo=1",
    ],
    [
      { p: "reject", pct: 100 },
      "quarantine",
      "v=DMARC1; p=reject; sp=quarantine; rua=mailto:org_1@rua.dmarc-emulator.test; fo=1",
    ],
  ] as const)("%j with sp %s", (stage, sp, expected) => {
    expect(recordWithStage(setup, stage, sp)).toBe(expected);
  });

  it("replaces the policy tags a value has, keeps an sp it is not told to set, and drops pct=100", () => {
    expect(
      recordWithStage(
        "v=DMARC1; p=quarantine; pct=25; sp=none; rua=mailto:a@b.example",
        { p: "reject", pct: 100 },
        undefined,
      ),
    ).toBe("v=DMARC1; p=reject; sp=none; rua=mailto:a@b.example");
  });
});

describe("a bad ramp stops the preview with one line", () => {
  const cases: [string, Record<string, unknown>[], Record<string, unknown> | undefined, string][] = [
    [
      "an unknown stage",
      [{ name: "acme.example", policy: { stage: "quarantine-half" } }],
      undefined,
      `${ACME} domain acme.example (domains[0]) policy.stage: must be a stage: none, quarantine or reject, the last two optionally with a pct of 1 to 100 as quarantine-25; got "quarantine-half"`,
    ],
    [
      "a stage that is not one of the steps",
      [{ name: "acme.example", policy: { stage: "quarantine-50" } }],
      undefined,
      `${ACME} domain acme.example (domains[0]) policy.stage: must be one of the steps (none, quarantine-25, quarantine, reject); got "quarantine-50"`,
    ],
    [
      "a target below the stage",
      [{ name: "acme.example", policy: { target: "quarantine", stage: "reject" } }],
      undefined,
      `${ACME} domain acme.example (domains[0]) policy.stage: is past the target quarantine (quarantine): lower the stage, or raise the target; got "reject"`,
    ],
    [
      "a pct outside 1 to 100",
      [{ name: "acme.example", policy: { steps: ["none", "quarantine-0", "reject"] } }],
      undefined,
      `${ACME} domain acme.example (domains[0]) policy.steps[1]: must be a stage: none, quarantine or reject, the last two optionally with a pct of 1 to 100 as quarantine-25; got "quarantine-0"`,
    ],
    [
      "a pct over 100",
      [{ name: "acme.example" }],
      { steps: ["none", "reject-150"] },
      `${ACME} policy.steps[1]: must be a stage: none, quarantine or reject, the last two optionally with a pct of 1 to 100 as quarantine-25; got "reject-150"`,
    ],
    [
      "a pass rate outside 0 to 100",
      [{ name: "acme.example", policy: { evidence: { minPassRate: 120 } } }],
      undefined,
      `${ACME} domain acme.example (domains[0]) policy.evidence.minPassRate: must be a percentage from 0 to 100; got 120`,
    ],
    [
      "a floor under 0",
      [{ name: "acme.example" }],
      { floor: -5 },
      `${ACME} policy.floor: must be a percentage from 0 to 100; got -5`,
    ],
    [
      "steps out of order",
      [{ name: "acme.example" }],
      { steps: ["none", "reject", "quarantine"] },
      `${ACME} policy.steps: must go from least to most strict, each once (none, quarantine-N, reject-N...); got ["none","reject","quarantine"]`,
    ],
    [
      "a policy on a hosted domain",
      [{ name: "acme.example", setupRecordType: "CNAME", policy: { stage: "none" } }],
      undefined,
      `${ACME} domain acme.example (domains[0]) policy: cannot be set: the service hosts this domain's record (setupRecordType: CNAME), so its policy is set in the service, not here; got {"stage":"none"}`,
    ],
    [
      "a policy on a domain published by nobody here",
      [{ name: "acme.example", dns: "none", policy: { target: "reject" } }],
      undefined,
      `${ACME} domain acme.example (domains[0]) policy: cannot be set: nobody here publishes this domain's record (dns: none), so its policy is not the fleet's to move; got {"target":"reject"}`,
    ],
    [
      "a misspelt key",
      [{ name: "acme.example", policy: { stages: "none" } }],
      undefined,
      `${ACME} domain acme.example (domains[0]) policy.stages: is not a known key (known: target, steps, floor, sp, evidence, stage, since)`,
    ],
    [
      "a since that is not a date",
      [{ name: "acme.example", policy: { since: "25/11/2026" } }],
      undefined,
      `${ACME} domain acme.example (domains[0]) policy.since: must be a date as YYYY-MM-DD, such as 2026-11-30; got "25/11/2026"`,
    ],
  ];

  it.each(cases)("%s", (_, domains, tenantPolicy, message) => {
    expect(problemsOf(inventoryOf(domains, tenantPolicy))).toEqual([message]);
  });

  it("names the domain by its name among many, not by counting", () => {
    const domains = Array.from({ length: 30 }, (_, index) => ({ name: `edge${index}.acme.example` }));
    domains[17] = { name: "edge17.acme.example", policy: { stage: "quarantine-50" } } as never;
    expect(problemsOf(inventoryOf(domains))).toEqual([
      `${ACME} domain edge17.acme.example (domains[17]) policy.stage: must be one of the steps (none, quarantine-25, quarantine, reject); got "quarantine-50"`,
    ]);
  });

  it("names a target the steps never reach", () => {
    expect(problemsOf(inventoryOf([{ name: "acme.example" }], { steps: ["none", "quarantine"] }))).toEqual([
      `${ACME} policy.target: must be the policy of one of the steps (none, quarantine); got "reject"`,
    ]);
  });
});
