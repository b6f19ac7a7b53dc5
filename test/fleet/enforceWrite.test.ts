import { describe, expect, it } from "vitest";
import { writtenMoves } from "../../provider/src/fleet/enforce/write";

// `enforce --write` alone: the moves land in each domain's policy, and every
// other line of the partner's file (comments, order, flow style) stays.

const FILE = `# Our customers.
defaults:
  group: Main # every tenant's group
  plan: Business
  policy: { target: reject }

tenants:
  # The first customer.
  - name: Acme
    domains:
      - name: acme.example
        policy:
          stage: none # moved by enforce
          since: 2026-11-01
      - name: mail.acme.example
        verify: true
  - name: Globex
    domains: [{ name: globex.example }]
`;

describe("writtenMoves", () => {
  it("replaces stage and since where they stand, and nothing else of the file", () => {
    const written = writtenMoves(FILE, "tenants.yaml", [
      { tenantIndex: 0, domainIndex: 0, stage: { p: "quarantine", pct: 100 }, since: "2026-11-15" },
    ]);
    expect(written).toBe(
      FILE.replace("stage: none # moved", "stage: quarantine # moved").replace("2026-11-01", "2026-11-15"),
    );
  });

  it("adds a policy where there is none, keeping comments and order", () => {
    const written = writtenMoves(FILE, "tenants.yaml", [
      { tenantIndex: 0, domainIndex: 0, stage: { p: "quarantine", pct: 25 }, since: "2026-11-15" },
      { tenantIndex: 0, domainIndex: 1, stage: { p: "none", pct: 100 }, since: "2026-11-15" },
    ]);
    expect(written).toBe(`# Our customers.
defaults:
  group: Main # every tenant's group
  plan: Business
  policy: { target: reject }

tenants:
  # The first customer.
  - name: Acme
    domains:
      - name: acme.example
        policy:
          stage: quarantine-25 # moved by enforce
          since: 2026-11-15
      - name: mail.acme.example
        verify: true
        policy:
          stage: none
          since: 2026-11-15
  - name: Globex
    domains: [ { name: globex.example } ]
`);
  });

  it("leaves the text as it is when there is no move", () => {
    expect(writtenMoves(FILE, "tenants.yaml", [])).toBe(FILE);
  });

  it("writes nothing that would not read back as an inventory", () => {
    expect(() =>
      writtenMoves(FILE, "tenants.yaml", [
        { tenantIndex: 0, domainIndex: 0, stage: { p: "reject", pct: 50 }, since: "2026-11-15" },
      ]),
    ).toThrow(/policy\.stage: must be one of the steps/);
  });
});
