import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type PlacedMove, writtenMoves, writtenPlacedMoves } from "../../provider/src/fleet/enforce/write";
import { parseStackPolicies } from "../../provider/src/tenant/stackPolicies";
import { lineDiff } from "../support/lineDiff";

// `enforce --write` alone: the moves land in each domain's policy in the
// style the file gives it, and every other line of the partner's file
// (comments, order, flow style) stays, so a move's diff is its domain's lines.

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
    domains: [{ name: globex.example }]
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

const moveOf = (tenantIndex: number, domainIndex: number, stage: string, since = "2026-12-05") => ({
  tenantIndex,
  domainIndex,
  stage: { none: { p: "none", pct: 100 }, "quarantine-25": { p: "quarantine", pct: 25 } }[stage] as {
    p: "none" | "quarantine";
    pct: number;
  },
  since,
});

describe("writtenMoves in the file's own style", () => {
  const INVENTORY = `defaults: { group: Main, subscription: none }
tenants:
  - name: Acme
    domains:
      - name: acme.example # the apex
        policy: { target: reject, evidence: { minDays: 7 } } # a week a step
      - name: shop.acme.example
        policy: # the shop's ramp
          target: reject # where it ends
          evidence: # what a step needs
            minDays: 7 # a week
        # the shop sends invoices monthly
      - name: news.acme.example
        verify: true # wait for the service
  - name: Globex
    domains: [{ name: globex.example }]
`;

  it("adds stage and since inside a flow mapping on its line, its comment kept", () => {
    const written = writtenMoves(INVENTORY, "tenants.yaml", [moveOf(0, 0, "none")]);
    expect(lineDiff(INVENTORY, written)).toEqual({
      removed: ["        policy: { target: reject, evidence: { minDays: 7 } } # a week a step"],
      added: [
        "        policy: { target: reject, evidence: { minDays: 7 }, stage: none, since: 2026-12-05 } # a week a step",
      ],
    });
  });

  it("adds them as lines of a block mapping at its indentation, after its last entry and its comments", () => {
    const written = writtenMoves(INVENTORY, "tenants.yaml", [moveOf(0, 1, "none")]);
    expect(lineDiff(INVENTORY, written)).toEqual({
      removed: [],
      added: ["          stage: none", "          since: 2026-12-05"],
    });
    expect(written).toContain(
      "            minDays: 7 # a week\n          stage: none\n          since: 2026-12-05\n        # the shop",
    );
  });

  it("adds a policy to a block domain as a block, and to a flow domain inside its braces", () => {
    const written = writtenMoves(INVENTORY, "tenants.yaml", [moveOf(0, 2, "none"), moveOf(1, 0, "none")]);
    expect(lineDiff(INVENTORY, written)).toEqual({
      removed: ["    domains: [{ name: globex.example }]"],
      added: [
        "        policy:",
        "          stage: none",
        "          since: 2026-12-05",
        "    domains: [{ name: globex.example, policy: { stage: none, since: 2026-12-05 } }]",
      ],
    });
  });

  it("replaces a stage written already where it stands, and adds the since it lacks", () => {
    const text = INVENTORY.replace("{ target: reject, evidence", "{ target: reject, stage: none, evidence");
    const written = writtenMoves(text, "tenants.yaml", [moveOf(0, 0, "quarantine-25")]);
    expect(lineDiff(text, written).added).toEqual([
      "        policy: { target: reject, stage: quarantine-25, evidence: { minDays: 7 }, since: 2026-12-05 } # a week a step",
    ]);
  });
});

describe("writtenPlacedMoves in a stack's configuration file", () => {
  const KEY = "acme:dmarcPolicy";
  const CONFIG = `config:
  dmarc:baseUrl: http://127.0.0.1:4010
  acme:dmarcPolicy: # the ramp of each domain
    clean.acme.example: { target: reject, evidence: { minDays: 7 } }
    parked.acme.example: { target: reject, stage: reject } # sends no mail
    apex.acme.example: # the apex
      target: reject # where it ends
      stage: none # where the record is
      since: "2026-11-20" # the day it got there
    news.acme.example: {}
`;
  const move = (domain: string, stage: PlacedMove["stage"], since = "2026-12-05"): PlacedMove => ({
    at: ["config", KEY, domain],
    stage,
    since,
  });
  const write = (text: string, moves: PlacedMove[]) =>
    writtenPlacedMoves(text, moves, {
      since: "QUOTE_DOUBLE",
      check: (after) => parseStackPolicies((parse(after) as { config: Record<string, unknown> }).config[KEY], KEY),
    });

  it("changes one line per domain in flow style and the moved values of a block one, every comment where it was", () => {
    const written = write(CONFIG, [
      move("clean.acme.example", { p: "none", pct: 100 }),
      move("parked.acme.example", { p: "reject", pct: 100 }),
      move("apex.acme.example", { p: "quarantine", pct: 25 }),
      move("news.acme.example", { p: "none", pct: 100 }),
    ]);
    expect(lineDiff(CONFIG, written)).toEqual({
      removed: [
        "    clean.acme.example: { target: reject, evidence: { minDays: 7 } }",
        "    parked.acme.example: { target: reject, stage: reject } # sends no mail",
        "      stage: none # where the record is",
        '      since: "2026-11-20" # the day it got there',
        "    news.acme.example: {}",
      ],
      added: [
        '    clean.acme.example: { target: reject, evidence: { minDays: 7 }, stage: none, since: "2026-12-05" }',
        '    parked.acme.example: { target: reject, stage: reject, since: "2026-12-05" } # sends no mail',
        "      stage: quarantine-25 # where the record is",
        '      since: "2026-12-05" # the day it got there',
        '    news.acme.example: { stage: none, since: "2026-12-05" }',
      ],
    });
  });

  it("keeps a file's CRLF line breaks on the lines it adds", () => {
    const text = CONFIG.replace('      since: "2026-11-20" # the day it got there\n', "").replaceAll("\n", "\r\n");
    const written = write(text, [move("apex.acme.example", { p: "quarantine", pct: 25 })]);
    expect(written).toBe(
      text.replace(
        "stage: none # where the record is\r\n",
        'stage: quarantine-25 # where the record is\r\n      since: "2026-12-05"\r\n',
      ),
    );
  });

  const WIDE =
    "    wide.acme.example: { target: reject, evidence: { minDays: 14, minMessages: 250, minPassRate: 97 } } # wide";

  it("writes a flow mapping that would pass the file's width (120) as block lines under its key", () => {
    const text = `${CONFIG}${WIDE}\n`;
    const written = write(text, [move("wide.acme.example", { p: "none", pct: 100 })]);
    expect(lineDiff(text, written)).toEqual({
      removed: [WIDE],
      added: [
        "    wide.acme.example:",
        "      target: reject",
        "      evidence: { minDays: 14, minMessages: 250, minPassRate: 97 }",
        "      stage: none",
        '      since: "2026-12-05" # wide',
      ],
    });
  });

  it("keeps a flow mapping on its line up to the file's longest line", () => {
    const text = `${CONFIG}${WIDE}\n    # ${"-".repeat(150)}\n`;
    const written = write(text, [move("wide.acme.example", { p: "none", pct: 100 })]);
    expect(lineDiff(text, written)).toEqual({
      removed: [WIDE],
      added: [WIDE.replace("97 } }", '97 }, stage: none, since: "2026-12-05" }')],
    });
  });
});
