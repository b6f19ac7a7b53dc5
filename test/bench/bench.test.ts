import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { boundsOf, FleetIds, type FleetSpec, operations, resourceCount } from "../../bench/src/fleet";
import type { BenchReport, PhaseResult } from "../../bench/src/report";
import { lineChart } from "../../bench/src/svg";
import { projectRoot } from "../../scripts/engine.mjs";
import { useEngine } from "../support/engine";

// The fleet benchmark at a tiny size: what it reports and how many requests
// each phase sent, never how long anything took (the machine is shared).

const fleet = (domainsPerTenant: number, domainsWaitForSubscription = false): FleetSpec => ({
  tenants: 3,
  domainsPerTenant,
  plan: "Starter",
  domainsWaitForSubscription,
});

describe("the fleet's call graph", () => {
  it("sets the lower bounds from the longest chain of dependent requests", () => {
    const settings = { latencyMs: 100, rateLimit: undefined, concurrency: 4 };
    // token, organisation, group, domain create, setup record
    expect(boundsOf(operations("up", fleet(3), new FleetIds()), settings)).toMatchObject({ requests: 32, depth: 5 });
    // token, plans
    expect(boundsOf(operations("preview", fleet(3), new FleetIds()), settings)).toMatchObject({
      requests: 2,
      depth: 2,
    });
    // token, domain read, setup record
    expect(boundsOf(operations("refresh", fleet(3), new FleetIds()), settings)).toMatchObject({ depth: 3 });
    // token, domain delete, group delete, subscriptions list and organisation delete
    expect(boundsOf(operations("destroy", fleet(3), new FleetIds()), settings)).toMatchObject({ depth: 5 });
    // Domains beyond an unsubscribed organisation's allowance wait for the plan: token, org, plan, domain, setup.
    expect(boundsOf(operations("up", fleet(8, true), new FleetIds()), settings).depth).toBe(5);
    expect(boundsOf(operations("destroy", fleet(8, true), new FleetIds()), settings).depth).toBe(6);
  });

  it("adds the rate limit and our concurrency to the bound", () => {
    const ops = operations("up", fleet(3), new FleetIds());
    const bounds = boundsOf(ops, { latencyMs: 100, rateLimit: 8, concurrency: 4 });
    expect(bounds.boundSeconds).toBeCloseTo(32 / 8);
    expect(bounds.floorSeconds).toBeCloseTo(Math.max(32 / 8, (32 * 0.1) / 4));
    expect(resourceCount(fleet(3))).toBe(21);
  });
});

describe("the time chart", () => {
  it("draws one line and one marker per point of every series, with its legend", () => {
    const svg = lineChart({
      title: "up <against> N",
      xLabel: "tenants",
      yLabel: "seconds",
      series: [
        { label: "up", color: "#000", points: [10, 50, 100].map((x) => ({ x, y: x / 4 })) },
        { label: "floor", color: "#888", dashed: true, points: [10, 50, 100].map((x) => ({ x, y: x / 40 })) },
      ],
    });
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(svg.match(/<polyline /g)).toHaveLength(2);
    expect(svg.match(/<circle /g)).toHaveLength(6);
    expect(svg).toContain("up &lt;against&gt; N");
    expect(svg).toContain('stroke-dasharray="6 4"');
  });
});

describe("npm run bench at 2 tenants × 1 domain without latency", () => {
  const out = mkdtempSync(join(tmpdir(), "dmarc-bench-"));
  let report: BenchReport;
  let markdown: string;

  beforeAll(async () => {
    const env = await useEngine();
    const args = ["--tenants", "2", "--domains", "1", "--latency", "0", "--out", out];
    await promisify(execFile)(process.execPath, [join(projectRoot, "bench", "dist", "main.js"), ...args], {
      env: { ...process.env, ...env },
      timeout: 240_000,
    });
    report = JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as BenchReport;
    markdown = readFileSync(join(out, "report.md"), "utf8");
  }, 300_000);

  afterAll(() => {
    rmSync(out, { recursive: true, force: true });
  });

  const byPhase = (results: PhaseResult[]) => Object.fromEntries(results.map((result) => [result.phase, result]));

  it("reports every phase for Pulumi and for the baseline", () => {
    expect(report.settings).toMatchObject({ tenants: 2, domainsPerTenant: 1, resources: 10, latencyMs: 0 });
    expect(report.phases.map((result) => result.phase)).toEqual(["up", "preview", "refresh", "destroy"]);
    expect(report.baseline.map((result) => result.phase)).toEqual(["up", "preview", "refresh", "destroy"]);
    for (const result of [...report.phases, ...report.baseline]) {
      expect(result.wallSeconds).toBeGreaterThan(0);
      expect(result.rateLimited).toBe(0);
      expect(result.processes.emulator.processes).toBe(1);
    }
    // Organisation, group, webhook, subscription and domain per tenant, and the stack.
    expect(byPhase(report.phases).up?.changes).toEqual({ create: 11 });
    expect(byPhase(report.phases).preview?.changes).toEqual({ same: 11 });
    expect(byPhase(report.phases).refresh?.changes).toEqual({ same: 11 });
    expect(byPhase(report.phases).destroy?.changes).toEqual({ delete: 11 });
  });

  it("counts the requests each phase sent, by route", () => {
    const pulumi = byPhase(report.phases);
    const baseline = byPhase(report.baseline);
    const creates = {
      "POST /v1/organizations": 2,
      "POST /v1/domain-groups": 2,
      "POST /v1/webhooks": 2,
      "POST /v1/partners/subscriptions/assign": 2,
      "POST /v1/domains": 2,
      "GET /v1/domains/:domain/setup": 2,
      "GET /v1/partners/plans": 1,
    };
    // The program and the provider process each obtain a token; the baseline's one client, one.
    expect(pulumi.up?.requestsByRoute).toEqual({ ...creates, "POST /auth/token": 2 });
    expect(baseline.up?.requestsByRoute).toEqual({ ...creates, "POST /auth/token": 1 });
    // A no-change preview: only the program's catalogue read.
    expect(pulumi.preview?.requestsByRoute).toEqual({ "POST /auth/token": 1, "GET /v1/partners/plans": 1 });
    for (const phase of ["refresh", "destroy"] as const) {
      expect(pulumi[phase]?.requestsByRoute).toEqual(baseline[phase]?.requestsByRoute);
    }
    expect(pulumi.refresh?.requests).toBe(13);
    expect(pulumi.destroy?.requestsByRoute).toMatchObject({
      "DELETE /v1/organizations/:organizationId": 2,
      "POST /v1/partners/subscriptions/:subscriptionId/cancel": 2,
    });
    expect(pulumi.destroy?.requests).toBe(15);
    expect(pulumi.up?.bounds).toMatchObject({ requests: 14, depth: 5, boundSeconds: 0 });
  });

  it("measures the state, the engine and the provider process", () => {
    expect(report.state?.resourcesInCheckpoint).toBeGreaterThanOrEqual(11);
    expect(report.state?.bytesPerResource).toBeGreaterThan(report.state?.providerBytesPerResource ?? 0);
    expect(report.state?.providerBytesPerResource).toBeGreaterThan(0);
    const up = byPhase(report.phases).up;
    expect(up?.processes.engine.peakMemoryMiB).toBeGreaterThan(0);
    expect(up?.processes.provider.peakMemoryMiB).toBeGreaterThan(0);
    expect(markdown).toContain("| phase | wall s | requests |");
    expect(markdown).toContain("| baseline destroy |");
  });
});
