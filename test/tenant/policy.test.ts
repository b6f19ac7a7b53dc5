import { PolicyError, stagedRecord, TenantPlanError, tenantPlan } from "pulumi-dmarc-partner";
import { describe, expect, it } from "vitest";

// A program's policy ramp refused before anything is registered: a Tenant's
// domain `policy` through the tenant plan, `stagedRecord` for a Domain
// published by hand. One line a problem, naming the domain by name and
// position, the key, the value given and what is allowed.

const LABEL = 'tenant "acme"';
const AT = `${LABEL}: domain acme.example (domains[1]) policy`;

function tenantRefusals(policy: Record<string, unknown>, setupRecordType?: "CNAME"): readonly string[] {
  const declaration = {
    name: "Acme",
    group: "Main",
    subscription: "none" as const,
    domains: [
      { name: "quiet.acme.example" },
      { name: "acme.example", policy, ...(setupRecordType ? { setupRecordType } : {}) },
    ],
  };
  try {
    tenantPlan("acme", declaration as never, LABEL);
  } catch (error) {
    expect(error).toBeInstanceOf(TenantPlanError);
    return (error as TenantPlanError).problems;
  }
  throw new Error("the declaration was accepted");
}

const STAGE_RULE =
  "must be a stage: none, quarantine or reject, the last two optionally with a pct of 1 to 100 as quarantine-25";

const cases: [string, Record<string, unknown>, string][] = [
  ["an unknown stage", { stage: "quarantine-half" }, `.stage: ${STAGE_RULE}; got "quarantine-half"`],
  [
    "a stage that is not one of the steps",
    { target: "reject", stage: "quarantine-50" },
    `.stage: must be one of the steps (none, quarantine-25, quarantine, reject); got "quarantine-50"`,
  ],
  [
    "a target below the stage",
    { target: "quarantine", stage: "reject" },
    `.stage: is past the target quarantine (quarantine): lower the stage, or raise the target; got "reject"`,
  ],
  ["a pct outside 1 to 100", { steps: ["none", "quarantine-0"] }, `.steps[1]: ${STAGE_RULE}; got "quarantine-0"`],
  [
    "a pass rate outside 0 to 100",
    { evidence: { minPassRate: 120 } },
    `.evidence.minPassRate: must be a percentage from 0 to 100; got 120`,
  ],
  ["a floor under 0", { floor: -5 }, `.floor: must be a percentage from 0 to 100; got -5`],
  [
    "steps out of order",
    { target: "reject", steps: ["none", "reject", "quarantine"] },
    `.steps: must go from least to most strict, each once (none, quarantine-N, reject-N...); got ["none","reject","quarantine"]`,
  ],
  [
    "a target the steps never reach",
    { target: "reject", steps: ["none", "quarantine"] },
    `.target: must be the policy of one of the steps (none, quarantine); got "reject"`,
  ],
  [
    "a target that is no policy",
    { target: "block" },
    `.target: must be one of "none", "quarantine", "reject"; got "block"`,
  ],
  [
    "a misspelt key",
    { stages: "none" },
    `.stages: is not a known key (known: target, steps, floor, sp, evidence, stage, since)`,
  ],
  [
    "a since that is not a date",
    { since: "25/11/2026" },
    `.since: must be a date as YYYY-MM-DD, such as 2026-11-30; got "25/11/2026"`,
  ],
];

describe("a Tenant's domain policy is refused at preview", () => {
  it.each(cases)("%s", (_, policy, message) => {
    expect(tenantRefusals(policy)).toEqual([`${AT}${message}`]);
  });

  it("on a record the service hosts", () => {
    expect(tenantRefusals({ stage: "none" }, "CNAME")).toEqual([
      `${AT}: cannot be set: the service hosts this domain's record (setupRecordType: CNAME), so its policy is set in the service, not here`,
    ]);
  });
});

describe("stagedRecord refuses a bad ramp before it stages anything", () => {
  const record = {
    host: "_dmarc.acme.example",
    name: "_dmarc",
    zone: "acme.example",
    type: "txt",
    recordType: "TXT" as const,
    value: "v=DMARC1; p=none",
  };

  it.each(cases)("%s", (_, policy, message) => {
    expect(() => stagedRecord("acme.example", record, policy as never)).toThrow(PolicyError);
    expect(() => stagedRecord("acme.example", record, policy as never)).toThrow(`domain acme.example policy${message}`);
  });
});
