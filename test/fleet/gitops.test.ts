import {
  COMMENT_LIMIT,
  exitCodeOf,
  FLEET_EXIT,
  type FleetOptions,
  type FleetReport,
  findingsMarkdown,
  runFleet,
  type TenantFindings,
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
  organizationsByName,
  serviceClient,
  tenant,
  uniqueFleetName,
} from "./support";

// A pull request's day on a fleet of three shards (shard size 2): a truncated
// inventory is refused with nothing deleted, and a change touching five
// tenants is planned, then applied, tenant by tenant, with its one
// tombstoned tenant offboarded and nothing else removed.

let emulator: EmulatorHandle;
const fleet = uniqueFleetName("gitops");
const [alpha, bravo, charlie, delta, echo] = ["alpha", "bravo", "charlie", "delta", "echo"].map((key) =>
  tenant(key),
) as [Entry, Entry, Entry, Entry, Entry];

function options(tenants: Entry[], extra: Partial<FleetOptions> = {}, sections: Entry = {}): FleetOptions {
  return fleetOptions(emulator, fleet, inventoryOf(tenants, sections), extra);
}

function exitCode(report: FleetReport, extra: { detailedExitcode?: boolean } = {}): number {
  return exitCodeOf(report, {
    command: report.command,
    json: false,
    detailedExitcode: extra.detailedExitcode ?? false,
    failOnUnmanaged: false,
    options: options([]),
  });
}

function outline(tenants: readonly TenantFindings[]): Record<string, string[]> {
  return findingsOutline(tenants, ["created", "updated", "replaced", "deleted"]);
}

beforeAll(async () => {
  await useEngine();
  emulator = await startTestEmulator();
  const up = await runFleet("up", options([alpha, bravo, charlie, delta, echo]));
  expect(up.results.map((result) => result.status)).toEqual(["done", "done", "done"]);
}, 600_000);

afterAll(async () => {
  await dropFleetStacks(options([]), fleet);
  await emulator?.emulator.close();
});

describe("offboarding only by approval", () => {
  it("refuses a truncated inventory: nothing is deleted, each missing tenant is named with its shard and objects", async () => {
    const report = await runFleet("up", options([alpha, bravo]));
    expect(report.ok).toBe(true);
    expect(exitCode(report)).toBe(FLEET_EXIT.refused.code);
    const refused = report.tenants.filter((found) => found.offboarding?.status === "refused");
    expect(refused.map((found) => [found.key, found.shard])).toEqual([
      ["charlie", `${fleet}-002`],
      ["delta", `${fleet}-002`],
      ["echo", `${fleet}-003`],
    ]);
    for (const found of refused) {
      expect(found.offboarding?.refusal).toMatch(/not in tenants\.yaml and not approved/);
      expect(found.offboarding?.irreversible).toBe(true);
      expect(found.offboarding?.objects.map((object) => `${object.type} ${object.effect}`)).toEqual(
        expect.arrayContaining(["Organization deleted with its data", "Subscription cancelled", "Domain removed"]),
      );
    }
    expect(report.totals.objects.delete).toBe(0);
    expect(report.results.map((result) => [result.shard, result.status, result.reason])).toEqual([
      [`${fleet}-001`, "skipped", "unchanged since its last up"],
      [`${fleet}-002`, "skipped", "nothing to run but refused offboardings"],
      [`${fleet}-003`, "skipped", "nothing to run but refused offboardings"],
    ]);
    const organizations = await organizationsByName(serviceClient(emulator));
    for (const key of ["alpha", "bravo", "charlie", "delta", "echo"])
      expect(organizations.has(`Tenant ${key}`)).toBe(true);
  }, 600_000);

  it("refuses an empty inventory, and more approved offboardings than --max-offboard", async () => {
    const empty = await runFleet("preview", options([], { allowOffboard: ["charlie"] }));
    expect(exitCode(empty)).toBe(FLEET_EXIT.refused.code);
    expect(empty.tenants.map((found) => found.offboarding?.refusal)).toEqual(
      Array(5).fill(expect.stringMatching(/lists no tenants while the shards hold 5/)),
    );

    const many = await runFleet(
      "preview",
      options([alpha, bravo], { allowOffboard: ["charlie", "delta", "echo"], maxOffboard: 2 }),
    );
    expect(exitCode(many)).toBe(FLEET_EXIT.refused.code);
    expect(many.tenants.map((found) => [found.key, found.offboarding?.refusal])).toEqual(
      ["charlie", "delta", "echo"].map((key) => [
        key,
        expect.stringMatching(/3 offboardings in one run, more than --max-offboard 2/),
      ]),
    );
  }, 600_000);
});

describe("a plan per tenant", () => {
  // Renames one tenant, adds a domain to another, changes a third's plan, offboards one and adds one.
  const change = () => [
    { ...alpha, name: "Alpha Renamed" },
    { ...bravo, domains: [{ name: "bravo.example" }, { name: "bravo2.example" }] },
    { ...charlie, plan: "Business" },
    echo,
    tenant("foxtrot", {
      webhooks: [{ name: "events", url: "https://hooks.example/foxtrot", events: ["domain.verified"] }],
    }),
  ];
  const tombstone = { offboard: [{ key: "delta", note: "contract ended", date: "2026-11-30" }] };
  const expected = () => ({
    delta: [
      "deleted Domain delta.example",
      "deleted DomainGroup delta/group",
      "deleted Organization delta",
      "deleted Subscription delta/subscription",
      "offboarding approved",
    ],
    alpha: ["updated Organization alpha name: Tenant alpha -> Alpha Renamed"],
    bravo: ["created Domain bravo2.example"],
    charlie: [
      `updated Subscription charlie/subscription priceId: price_${emulator.partner.id}_starter_monthly -> price_${emulator.partner.id}_business_monthly`,
    ],
    foxtrot: [
      "new",
      "created Organization foxtrot",
      "created DomainGroup foxtrot/group",
      "created Subscription foxtrot/subscription",
      "created Domain foxtrot.example",
      "created Webhook foxtrot/webhook/events",
    ].sort(),
  });

  it("lists exactly the edits of a change touching five tenants, the offboarding first", async () => {
    const preview = await runFleet("preview", options(change(), {}, tombstone));
    expect(preview.ok).toBe(true);
    expect(exitCode(preview)).toBe(FLEET_EXIT.ok.code);
    expect(exitCode(preview, { detailedExitcode: true })).toBe(FLEET_EXIT.changes.code);
    expect(preview.tenants[0]?.key).toBe("delta");
    expect(outline(preview.tenants)).toEqual(expected());
    const offboarding = preview.tenants[0]?.offboarding;
    expect(offboarding).toMatchObject({
      approvedBy: "tombstone",
      note: "contract ended",
      date: "2026-11-30",
      onDelete: "delete",
      irreversible: true,
    });
    expect(preview.removableTombstones).toEqual([]);
    expect(offboarding?.objects.find((object) => object.type === "Organization")?.id).toMatch(/^org_/);
    expect(preview.totals.tenants).toEqual({ new: 1, changed: 3, offboarding: 1, refused: 0, drifted: 0 });
    expect(preview.totals.objects).toMatchObject({ create: 6, update: 2, replace: 0, delete: 4 });

    const comment = findingsMarkdown(
      { command: preview.command, fleet: preview.fleet, results: preview.results, findings: preview },
      { fullReport: "plan.full.md" },
    );
    expect(comment.length).toBeLessThan(COMMENT_LIMIT);
    expect(comment).toContain("[!CAUTION]");
    expect(comment).toMatch(/<details><summary><b>delta<\/b> \(gitops-[^)]+-002\): offboard, irreversible<\/summary>/);
    expect(comment).toContain('name: `"Tenant alpha"` → `"Alpha Renamed"`');
  }, 600_000);

  it("applies it: up reports the same per tenant, offboards the tombstoned tenant and only it", async () => {
    const up = await runFleet("up", options(change(), {}, tombstone));
    expect(up.ok).toBe(true);
    expect(exitCode(up)).toBe(FLEET_EXIT.ok.code);
    expect(outline(up.tenants)).toEqual(expected());
    // The new webhook's signing secret and the partner's client secret appear nowhere in the report.
    const text = JSON.stringify(up);
    expect(text).not.toContain("whsec_");
    expect(text).not.toContain(emulator.partner.clientSecret);
    const organizations = await organizationsByName(serviceClient(emulator));
    expect(organizations.has("Tenant delta")).toBe(false);
    for (const name of ["Alpha Renamed", "Tenant bravo", "Tenant charlie", "Tenant echo", "Tenant foxtrot"])
      expect(organizations.has(name)).toBe(true);
    expect(up.removableTombstones).toEqual([{ key: "delta", reason: "offboarded by this run" }]);
    const later = await runFleet("status", options(change(), {}, tombstone));
    expect(later.removableTombstones).toEqual([{ key: "delta", reason: "no shard holds it" }]);
  }, 600_000);
});
