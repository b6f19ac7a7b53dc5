import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runStackEnforce } from "../../provider/src/fleet/enforce/stack";
import { settingsFrom } from "../../provider/src/runtime/config";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { lineDiff } from "../support/lineDiff";
import { SENDER_PROFILES } from "../support/ramp";
import { serviceClient } from "./support";

// The enforcement guide's program example as a partner copies it: its
// `Pulumi.prod.yaml`, enforced by `enforce --stack prod --write` against the
// emulator over two weeks of reports. Each run's diff of the file is one line
// per moved domain, and every other line (comments included) stays.

const GUIDE = join(__dirname, "..", "..", "docs", "guides", "enforcement.md");

/** The guide's `Pulumi.prod.yaml`, as written. */
function guideConfig(): string {
  const block = /```yaml\n(# Pulumi\.prod\.yaml\n[\s\S]*?)```/.exec(readFileSync(GUIDE, "utf8"))?.[1];
  if (block === undefined) throw new Error(`${GUIDE} has no Pulumi.prod.yaml example`);
  return block;
}

/** The file's line of a domain. */
const lineOf = (text: string, domain: string) =>
  text.split("\n").find((line) => line.trimStart().startsWith(`${domain}:`));

let emulator: EmulatorHandle;
let configPath: string;

async function enforce(): Promise<{ moved: string[]; before: string; after: string }> {
  const { today } = await emulator.control<{ today: string }>("GET", "/clock");
  const before = readFileSync(configPath, "utf8");
  const report = await runStackEnforce({
    configPath,
    projectName: "acme",
    stackName: "prod",
    settings: settingsFrom(() => undefined, emulator.env),
    today,
    write: true,
  });
  const moved = report.tenants
    .flatMap((tenant) => tenant.domains)
    .filter(({ decision }) => ["start", "advance", "back"].includes(decision.kind))
    .map(({ domain }) => domain);
  return { moved: moved.sort(), before, after: readFileSync(configPath, "utf8") };
}

/** The lines a run changed: each moved domain's one line, and nothing else. */
function expectOneLinePerMove({ moved, before, after }: Awaited<ReturnType<typeof enforce>>): void {
  const diff = lineDiff(before, after);
  expect(diff.removed).toEqual(moved.map((domain) => lineOf(before, domain)));
  expect(diff.added).toEqual(moved.map((domain) => lineOf(after, domain)));
}

describe("the enforcement guide's program example, enforced by --stack --write", () => {
  beforeAll(async () => {
    emulator = await startTestEmulator();
    const client = serviceClient(emulator);
    const organizationId = (await client.createOrganization({ name: "Acme" })).id;
    const groupId = (await client.createDomainGroup({ organizationId, name: "Production" })).id;
    for (const domain of ["acme.example", "news.acme.example", "parked.acme.example"])
      await client.createDomain({ organizationId, domain, type: "sending", groupId });
    for (const domain of ["acme.example", "news.acme.example"])
      await emulator.control("PUT", `/reports/${domain}`, SENDER_PROFILES.clean);
    const folder = mkdtempSync(join(tmpdir(), "dmarc-guide-"));
    configPath = join(folder, "Pulumi.prod.yaml");
    writeFileSync(configPath, guideConfig());
  });

  afterAll(async () => {
    await emulator?.emulator.close();
  });

  it("starts the two ramps without a since on their one line each", async () => {
    const run = await enforce();
    expect(run.moved).toEqual(["news.acme.example", "parked.acme.example"]);
    expectOneLinePerMove(run);
    expect(lineOf(run.after, "parked.acme.example")).toMatch(
      /^ {4}parked\.acme\.example: \{ target: reject, stage: reject, since: "\d{4}-\d{2}-\d{2}" \} # sends no mail$/,
    );
  });

  it("two weeks of clean reports later, advances the two that send mail, each on its one line", async () => {
    await emulator.control("POST", "/clock", { advanceDays: 14 });
    const run = await enforce();
    expect(run.moved).toEqual(["acme.example", "news.acme.example"]);
    expectOneLinePerMove(run);
    expect(lineOf(run.after, "acme.example")).toMatch(/stage: quarantine, since: "\d{4}-\d{2}-\d{2}" \}$/);
    expect(lineOf(run.after, "news.acme.example")).toMatch(/stage: quarantine-25, since: "\d{4}-\d{2}-\d{2}" \}$/);
  });
});
