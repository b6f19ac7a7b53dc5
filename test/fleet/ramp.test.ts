import type { DomainPolicy, Stage } from "pulumi-dmarc-partner";
import { describe, expect, it } from "vitest";
import {
  type Decision,
  decide,
  decisionText,
  dmarcPassRate,
  evidenceWindow,
  needsEvidence,
} from "../../provider/src/fleet/enforce/ramp";

// The ramp's decision alone: for each stage, day and evidence, the one move
// (or hold, with its numbers) the fleet proposes.

const NONE: Stage = { p: "none", pct: 100 };
const Q25: Stage = { p: "quarantine", pct: 25 };
const Q100: Stage = { p: "quarantine", pct: 100 };
const REJECT: Stage = { p: "reject", pct: 100 };
const TODAY = "2026-12-15";

function policy(stage: Stage, since: string | null = "2026-12-01", target: Stage["p"] = "reject"): DomainPolicy {
  return {
    target,
    steps: [NONE, Q25, Q100, REJECT],
    evidence: { minPassRate: 98, minMessages: 500, minDays: 14 },
    floor: 90,
    stage,
    ...(since ? { since } : {}),
  };
}

const clean = { figures: { dkimPassRate: 99.4, spfPassRate: 97.1, messages: 2800 } };

describe("the gate", () => {
  it("is the better of DKIM's and SPF's pass rates: either passing aligned passes DMARC", () => {
    expect(dmarcPassRate({ dkimPassRate: 71, spfPassRate: 99, messages: 10 })).toBe(99);
    expect(dmarcPassRate({ dkimPassRate: 99.5, spfPassRate: 60, messages: 10 })).toBe(99.5);
  });
});

describe("decide", () => {
  it("starts the ramp of a domain with no since, today", () => {
    expect(decide(policy(NONE, null), TODAY, undefined)).toEqual({ kind: "start", stage: NONE, since: TODAY });
  });

  it.each([
    [NONE, Q25],
    [Q25, Q100],
    [Q100, REJECT],
  ])("advances one step from %j when days, messages and pass rate all hold", (from, to) => {
    expect(decide(policy(from), TODAY, clean)).toEqual({
      kind: "advance",
      from,
      to,
      since: TODAY,
      figures: clean.figures,
    });
  });

  it.each<[string, DomainPolicy, Parameters<typeof decide>[2], string[]]>([
    ["too few days", policy(NONE, "2026-12-10"), clean, ["held 5 of 14 days"]],
    [
      "too few messages",
      policy(NONE),
      { figures: { dkimPassRate: 100, spfPassRate: 100, messages: 120 } },
      ["120 messages, needs 500"],
    ],
    [
      "a poor pass rate",
      policy(NONE),
      { figures: { dkimPassRate: 62.5, spfPassRate: 91.25, messages: 5000 } },
      ["pass rate 91.3%, needs 98%"],
    ],
    ["no reports", policy(NONE), { figures: undefined }, ["no reports over the days held"]],
    [
      "a failed read",
      policy(Q25),
      { failure: "the service answered 503" },
      ["evidence could not be read: the service answered 503"],
    ],
    ["a since in the future", policy(NONE, "2026-12-20"), clean, ["since 2026-12-20 is after 2026-12-15"]],
  ])("holds with %s, saying so in numbers", (_, given, evidence, reasons) => {
    const decision = decide(given, TODAY, evidence);
    expect(decision.kind).toBe("hold");
    expect(decision.kind === "hold" && decision.reasons).toEqual(reasons);
  });

  it("steps a moved domain back one when its pass rate falls under the floor, even before its days are up", () => {
    const poor = { figures: { dkimPassRate: 70, spfPassRate: 84, messages: 900 } };
    expect(decide(policy(Q100, "2026-12-12"), TODAY, poor)).toEqual({
      kind: "back",
      from: Q100,
      to: Q25,
      since: TODAY,
      figures: poor.figures,
      floor: 90,
    });
    // At its first step there is nothing to step back to: it holds.
    expect(decide(policy(NONE), TODAY, poor).kind).toBe("hold");
  });

  it("never steps back on a failed or empty read", () => {
    expect(decide(policy(REJECT), TODAY, { failure: "timeout" }).kind).toBe("hold");
    expect(decide(policy(Q25), TODAY, { figures: undefined }).kind).toBe("hold");
  });

  it("proposes nothing for a domain at its target", () => {
    expect(decide(policy(REJECT), TODAY, clean)).toEqual({ kind: "target", stage: REJECT, figures: clean.figures });
    expect(decide(policy(Q100, "2026-12-01", "quarantine"), TODAY, clean).kind).toBe("target");
    expect(decide(policy(NONE, "2026-12-01", "none"), TODAY, undefined).kind).toBe("target");
  });
});

describe("the evidence a run reads", () => {
  it("covers complete days at the current stage, the last minDays at most", () => {
    expect(evidenceWindow(policy(NONE, "2026-12-01"), TODAY)).toEqual({ from: "2026-12-01", to: "2026-12-14" });
    expect(evidenceWindow(policy(NONE, "2026-06-01"), TODAY)).toEqual({ from: "2026-12-01", to: "2026-12-14" });
    expect(evidenceWindow(policy(Q25, "2026-12-12"), TODAY)).toEqual({ from: "2026-12-12", to: "2026-12-14" });
    expect(evidenceWindow(policy(Q25, TODAY), TODAY)).toBeUndefined();
    expect(evidenceWindow(policy(NONE, null), TODAY)).toBeUndefined();
  });

  it("is read below the target and past the first step, not for a domain at none with target none", () => {
    expect(needsEvidence(policy(NONE), TODAY)).toBe(true);
    expect(needsEvidence(policy(REJECT), TODAY)).toBe(true);
    expect(needsEvidence(policy(NONE, "2026-12-01", "none"), TODAY)).toBe(false);
    expect(needsEvidence(policy(Q25, TODAY), TODAY)).toBe(false);
  });
});

describe("decisionText", () => {
  it.each<[Decision, string]>([
    [
      { kind: "advance", from: NONE, to: Q25, since: TODAY, figures: clean.figures },
      "none → quarantine (pct 25): pass rate 99.4% (DKIM 99.4%, SPF 97.1%) over 2,800 messages",
    ],
    [
      { kind: "back", from: Q100, to: Q25, since: TODAY, figures: clean.figures, floor: 90 },
      "step back quarantine → quarantine (pct 25): pass rate 99.4% (DKIM 99.4%, SPF 97.1%) over 2,800 messages, under the floor of 90%",
    ],
    [{ kind: "hold", stage: NONE, reasons: ["held 5 of 14 days"] }, "hold at none: held 5 of 14 days"],
    [{ kind: "start", stage: NONE, since: TODAY }, "ramp starts at none: days held count from 2026-12-15"],
    [{ kind: "target", stage: REJECT }, "at its target reject"],
  ])("%j", (decision, text) => {
    expect(decisionText(decision)).toBe(text);
  });
});
