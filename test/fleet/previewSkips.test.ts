import {
  exitCodeOf,
  FLEET_EXIT,
  type FleetOptions,
  type FleetReport,
  findingsMarkdown,
  findingsText,
  runFleet,
} from "pulumi-dmarc-partner/fleet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { useEngine } from "../support/engine";
import {
  dropFleetStacks,
  type Entry,
  findingsOutline,
  fleetOptions,
  inventoryOf,
  tenant,
  uniqueFleetName,
} from "./support";

// A pull request's plan on a fleet of 60 tenants in six shards of 10: the
// preview runs the shards whose inputs changed since their last successful
// up and those that are due, and names every other shard unchanged, with
// its up mark as the evidence and its tenants listed, not left out.

let emulator: EmulatorHandle;
const fleet = uniqueFleetName("previewskips");
const tenants = Array.from({ length: 60 }, (_, index) => tenant(`t${String(index).padStart(2, "0")}`));
const shard = (number: number) => `${fleet}-${String(number).padStart(3, "0")}`;

/** The inventory with one tenant's entry replaced (t15 sits in shard 002, t35 in shard 004). */
function editing(edits: Record<string, Entry>): Entry[] {
  return tenants.map((entry) => edits[String(entry.key)] ?? entry);
}

const withSecondDomain = (key: string): Entry => ({
  ...tenant(key),
  domains: [{ name: `${key}.example` }, { name: `${key}-two.example` }],
});

function options(entries: Entry[], extra: Partial<FleetOptions> = {}): FleetOptions {
  return fleetOptions(emulator, fleet, inventoryOf(entries), { shardSize: 10, concurrency: 2, ...extra });
}

function detailedExitCode(report: FleetReport): number {
  return exitCodeOf(report, {
    command: report.command,
    json: true,
    detailedExitcode: true,
    failOnUnmanaged: false,
    options: options([]),
  });
}

const ran = (report: FleetReport) =>
  report.results.filter((result) => result.status !== "skipped").map((result) => result.shard);

const UNCHANGED = /^unchanged since its last up at \d{4}-\d\d-\d\dT[\d:.]+Z \(digest [0-9a-f]{16}\)$/;

beforeAll(async () => {
  await useEngine();
  emulator = await startTestEmulator();
  const up = await runFleet("up", options(tenants));
  expect(up.results.map((result) => [result.shard, result.status])).toEqual(
    [1, 2, 3, 4, 5, 6].map((number) => [shard(number), "done"]),
  );
}, 900_000);

afterAll(async () => {
  await dropFleetStacks(options([]), fleet);
  await emulator?.emulator.close();
});

describe("a preview of one tenant's edit", () => {
  it("previews only that tenant's shard, names its change, and lists the others' tenants as unchanged", async () => {
    const preview = await runFleet("preview", options(editing({ t15: withSecondDomain("t15") })));
    expect(ran(preview)).toEqual([shard(2)]);
    expect(detailedExitCode(preview)).toBe(FLEET_EXIT.changes.code);
    expect(findingsOutline(preview.tenants, ["created", "updated", "replaced", "deleted"])).toEqual({
      t15: ["created Domain t15-two.example"],
    });
    expect(preview.unchanged?.map((each) => [each.shard, each.tenants.length])).toEqual(
      [1, 3, 4, 5, 6].map((number) => [shard(number), 10]),
    );
    // Each skipped shard's evidence is its up mark: the time and digest `status` reads from it.
    for (const unchanged of preview.unchanged ?? []) {
      expect(unchanged.evidence).toMatch(UNCHANGED);
      const overview = preview.shards.find((each) => each.name === unchanged.shard);
      expect(unchanged.evidence).toContain(`at ${overview?.lastUp?.at} (digest ${overview?.digest})`);
      expect(preview.results.find((result) => result.shard === unchanged.shard)?.status).toBe("skipped");
    }
    expect(preview.unchanged?.[0]?.tenants).toEqual(tenants.slice(0, 10).map((entry) => entry.key));
    expect(findingsText(preview, "Plan per tenant")).toMatch(
      new RegExp(`Unchanged, not run: 50 tenant\\(s\\) in 5 shard\\(s\\)[^\\n]*\\n  ${shard(1)}: unchanged since`),
    );
    const comment = findingsMarkdown(
      { command: preview.command, fleet: preview.fleet, results: preview.results, findings: preview },
      { fullReport: "plan.full.md" },
    );
    expect(comment).toContain("t15-two.example");
    expect(comment).toContain("Unchanged, not run: 50 tenant(s) in 5 shard(s)");
    expect(comment).toContain("`t59`");
  }, 600_000);

  it("previews a shard whose last up failed too, with the edited one", async () => {
    const fault = await emulator.control<{ id: string }>("POST", "/faults", {
      route: "POST /v1/domains",
      errorRate: 1,
      errorStatus: 503,
    });
    const failedEdit = { t35: withSecondDomain("t35") };
    const failing = await runFleet("up", options(editing(failedEdit)));
    await emulator.control("DELETE", `/faults/${fault.id}`);
    expect(failing.results.filter((result) => result.status === "failed").map((result) => result.shard)).toEqual([
      shard(4),
    ]);

    const preview = await runFleet("preview", options(editing({ ...failedEdit, t15: withSecondDomain("t15") })));
    expect(ran(preview)).toEqual([shard(2), shard(4)]);
    expect(preview.shards.find((each) => each.name === shard(4))?.due).toMatch(/^its last up failed at /);
    expect(detailedExitCode(preview)).toBe(FLEET_EXIT.changes.code);
    expect(findingsOutline(preview.tenants, ["created", "updated", "replaced", "deleted"])).toEqual({
      t15: ["created Domain t15-two.example"],
      t35: ["created Domain t35-two.example"],
    });
    expect(preview.unchanged?.map((each) => each.shard)).toEqual([1, 3, 5, 6].map(shard));
  }, 600_000);

  it("previews every shard with --all", async () => {
    const preview = await runFleet("preview", options(tenants, { all: true }));
    expect(ran(preview)).toEqual([1, 2, 3, 4, 5, 6].map(shard));
    expect(preview.unchanged).toBeUndefined();
  }, 600_000);
});
