import { beforeAll, describe, expect, it } from "vitest";
import type { PluginBenchReport, PluginSide } from "../../bench/src/pluginBench";
import { runBench } from "../support/bench";

// The plugin benchmark at 2 tenants: both columns filled, the same objects
// declared on both sides, never how long anything took (the machine is shared).

const UNCOMPARED_ROUTES = ["POST /auth/token", "POST /v1/domains", "POST /v1/domains/batch"];

/**
 * The requests of a phase that the declared objects cause, whoever declares
 * them: not the tokens (the dynamic resources' program gets one of its own),
 * nor how a tenant's domain creates split between single and batch (timing).
 */
const objectRequests = (routes: Record<string, number>) =>
  Object.fromEntries(Object.entries(routes).filter(([route]) => !UNCOMPARED_ROUTES.includes(route)));

/** The invitations' own request in each phase: every object of the tenant is declared on both sides. */
const INVITATION_ROUTES = { up: "POST /v1/users/invite", destroy: "POST /v1/users/revoke-organization-access" };

describe("npm run bench -- --plugin at 2 tenants without latency", () => {
  let report: PluginBenchReport;
  let markdown: string;

  beforeAll(async () => {
    ({ report, markdown } = await runBench<PluginBenchReport>(
      ["--plugin", "--tenants", "2", "--latency", "0"],
      "plugin",
    ));
  }, 300_000);

  const side = (name: PluginSide["side"]) => report.sides.find((candidate) => candidate.side === name);
  const phase = (name: PluginSide["side"], phaseName: string) =>
    side(name)?.phases.find((candidate) => candidate.phase === phaseName);

  it("runs up, a no-change preview and destroy of the same objects on both sides", () => {
    // One domain, then two: organisation, group, subscription, webhook, invitation and the domains, and the stack.
    expect(report.settings).toMatchObject({ tenants: 2, resources: 13, latencyMs: 0 });
    expect(report.domains).toBe(3);
    expect(report.sides.map((candidate) => candidate.side)).toEqual(["dynamic", "plugin"]);
    for (const name of ["dynamic", "plugin"] as const) {
      expect(side(name)?.phases.map((sample) => [sample.phase, sample.changes])).toEqual([
        ["up", { create: 14 }],
        ["preview", { same: 14 }],
        ["destroy", { delete: 14 }],
      ]);
    }
    for (const [phaseName, invitations] of Object.entries(INVITATION_ROUTES)) {
      const dynamic = objectRequests(phase("dynamic", phaseName)?.requestsByRoute ?? {});
      expect(dynamic[invitations]).toBe(2);
      expect(dynamic["GET /v1/domains/:domain/setup"] ?? dynamic["DELETE /v1/domains/:domain"]).toBe(3);
      expect(objectRequests(phase("plugin", phaseName)?.requestsByRoute ?? {})).toEqual(dynamic);
    }
  });

  it("measures the state and the processes of both sides", () => {
    const dynamic = side("dynamic")?.state;
    const plugin = side("plugin")?.state;
    // The dynamic provider's reference in every resource's state; the plugin has none.
    expect(dynamic?.providerBytesPerResource).toBeGreaterThan(0);
    expect(plugin?.providerBytesPerResource).toBe(0);
    expect(plugin?.bytesPerResource).toBeGreaterThan(0);
    for (const name of ["dynamic", "plugin"] as const) {
      const up = phase(name, "up");
      expect(up?.processes.engine.cpuSeconds).toBeGreaterThan(0);
      expect(up?.programCpuSeconds).toBeGreaterThan(0);
      // The dynamic provider's node and the plugin's, named by what they run, not by their launchers.
      for (const sample of side(name)?.phases ?? []) {
        expect(sample.processes.provider.cpuSeconds, `${name} ${sample.phase}`).toBeGreaterThan(0);
      }
      // Every engine run has ended by the phase's end, so its CPU (and the provider's, its child) is counted whole.
      expect(up?.endedChildrenCpuSeconds).toBeGreaterThan(0);
      // An inline program runs in the bench's process: the engine starts no language host for it.
      expect(up?.processes.language.processes).toBe(0);
    }
  });

  it("prints both columns of every figure", () => {
    const rows = markdown.split("\n").filter((line) => /^\| (up|preview|destroy|all three|state)/.test(line));
    expect(rows.length).toBeGreaterThan(30);
    for (const row of rows) {
      const [, dynamic, plugin] = row.split(" | ");
      expect(dynamic, row).toMatch(/^\d/);
      expect(plugin, row).toMatch(/^\d/);
    }
    expect(markdown).toContain("| phase: figure | dynamic resources | plugin, generated SDK | plugin ÷ dynamic |");
  });
});
