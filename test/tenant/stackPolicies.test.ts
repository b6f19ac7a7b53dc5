import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runStackEnforce } from "pulumi-dmarc-partner/fleet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { settingsOf } from "../../provider/src/fleet/fleetOptions";
import { parseStackPolicies, stackPolicyRefusals } from "../../provider/src/tenant/stackPolicies";
import { PolicyError } from "../../provider/src/tenant/staging";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";

// A program's ramps in its stack's configuration alone: what the key may
// hold, each refusal naming the domain and the key, and the moves written
// back into the file with its comments, order and Pulumi's quoting; the
// evidence from the emulator, which has no reports for these domains.

const WHERE = "Pulumi.prod.yaml: acme:dmarcPolicy";

describe("stackPolicyRefusals", () => {
  it.each([
    [
      { "acme.example": { stage: "quarantine-50" } },
      `${WHERE}: domain acme.example policy.stage: must be one of the steps (none, quarantine-25, quarantine, reject); got "quarantine-50"`,
    ],
    [
      { "acme.example": { target: "strict" } },
      `${WHERE}: domain acme.example policy.target: must be one of "none", "quarantine", "reject"; got "strict"`,
    ],
    [
      { "acme.example": { since: "25.11.2026" } },
      `${WHERE}: domain acme.example policy.since: must be a date as YYYY-MM-DD, such as 2026-11-30; got "25.11.2026"`,
    ],
    [{ "acme.example": { stages: [] } }, `${WHERE}: domain acme.example policy.stages: is not a known key`],
    [{ "acme.example": "reject" }, `${WHERE}: domain acme.example: must be a mapping; got "reject"`],
    [{ "Acme.Example": {} }, `${WHERE}: domain Acme.Example: must be a lower-case domain name`],
    [["acme.example"], `${WHERE}: the domains' ramps: must be a mapping`],
  ])("refuses %j naming the domain and the key", (value, message) => {
    expect(stackPolicyRefusals(value, WHERE).join("\n")).toContain(message);
  });

  it("takes every key of the inventory's policy, and no key at all as no ramp", () => {
    const value = {
      "acme.example": {
        target: "reject",
        steps: ["none", "reject"],
        floor: 80,
        sp: "none",
        stage: "none",
        since: "2026-11-25",
      },
      "news.acme.example": { evidence: { minMessages: 100 } },
    };
    expect(stackPolicyRefusals(value, WHERE)).toEqual([]);
    expect([...parseStackPolicies(value, WHERE).keys()]).toEqual(["acme.example", "news.acme.example"]);
    expect(parseStackPolicies(undefined, WHERE).size).toBe(0);
    expect(() => parseStackPolicies({ "acme.example": { stage: "x" } }, WHERE)).toThrow(PolicyError);
  });
});

const FILE = `# Acme's production stack.
config:
  dmarc:baseUrl: http://127.0.0.1:9
  acme:dmarcPolicy:
    # the shop
    acme.example:
      target: reject
      stage: none # moved by enforce
      since: "2026-11-01"
    news.acme.example: { target: reject }
    parked.acme.example:
      target: reject
      stage: reject
`;

describe("runStackEnforce", () => {
  let emulator: EmulatorHandle;
  beforeAll(async () => {
    emulator = await startTestEmulator();
  });
  afterAll(async () => {
    await emulator?.emulator.close();
  });

  it("starts each ramp without a since in the file, keeping comments, order and the other keys", async () => {
    const configPath = join(mkdtempSync(join(tmpdir(), "dmarc-stack-")), "Pulumi.prod.yaml");
    writeFileSync(configPath, FILE);
    const report = await runStackEnforce({
      configPath,
      projectName: "acme",
      stackName: "prod",
      settings: settingsOf({ config: emulator.stackConfig }),
      today: "2026-11-27",
      write: true,
    });
    expect(report).toMatchObject({
      stack: "prod",
      config: "Pulumi.prod.yaml",
      written: true,
      read: { domains: 1, failed: 0 },
    });
    expect(
      report.tenants.flatMap((group) => group.domains.map(({ domain, decision }) => [domain, decision.kind])),
    ).toEqual([
      ["acme.example", "hold"],
      ["news.acme.example", "start"],
      ["parked.acme.example", "start"],
    ]);
    const written = readFileSync(configPath, "utf8");
    expect(written).toContain(`    parked.acme.example:
      target: reject
      stage: reject
      since: "2026-11-27"
`);
    expect(written).toContain(`news.acme.example: { target: reject, stage: none, since: "2026-11-27" }`);
    expect(written.replace(/\n {4}news[^\n]*\n/, "\n").replace(/\n {6}since: "2026-11-27"\n$/, "\n")).toBe(
      FILE.replace(/\n {4}news[^\n]*\n/, "\n"),
    );
  });
});
