import { join } from "node:path";
import type { FleetReport } from "pulumi-dmarc-partner/fleet";
import { beforeAll, describe, expect, it } from "vitest";
import { sideArguments } from "../../bench/src/against";
import { figuresFrom, summarize, workloadOf } from "../../bench/src/figures";
import { boundsOf, type FleetSpec, FleetState, operations, resourceCount } from "../../bench/src/fleet";
import { type FleetSweepRow, timeBreakdown, timeMarkdown } from "../../bench/src/fleetSweep";
import { type BaselineEntry, beside, machineDescription, readBaselines } from "../../bench/src/lastRelease";
import { type BenchOptions, parseOptions } from "../../bench/src/options";
import type { BenchReport, PhaseResult } from "../../bench/src/report";
import { lineChart } from "../../bench/src/svg";
import { commitOf } from "../../scripts/checkout.mjs";
import { projectRoot } from "../../scripts/project.mjs";
import { runBench } from "../support/bench";

// The fleet benchmark at a tiny size: what it reports and how many requests
// each phase sent, never how long anything took (the machine is shared).

const fleet = (domainsPerTenant: number, domainsWaitForSubscription = false): FleetSpec => ({
  tenants: 3,
  domainsPerTenant,
  plan: "Starter",
  domainsWaitForSubscription,
});

describe("the fleet's call graph", () => {
  it("sets the latency bound from the longest chain of operations that wait for one another", () => {
    const settings = { latencyMs: 100, rateLimit: undefined, concurrency: 4 };
    const depth = (phase: "up" | "preview" | "refresh" | "destroy", spec: FleetSpec) =>
      boundsOf(operations(phase, spec, new FleetState()), 10, settings).depth;
    // token, organisation, group, domain
    expect(depth("up", fleet(3))).toBe(4);
    // token, plans
    expect(depth("preview", fleet(3))).toBe(2);
    // token, any read
    expect(depth("refresh", fleet(3))).toBe(2);
    // token, domain, group, organisation
    expect(depth("destroy", fleet(3))).toBe(4);
    // Domains beyond an unsubscribed organisation's allowance wait for the plan: token, org, plan, domain.
    const waiting = operations("up", fleet(8, true), new FleetState()).find(
      (op) => op.key === "t1/d1.t1.bench.example",
    );
    expect(waiting?.after).toEqual(["t1/org", "t1/group", "t1/plan"]);
    expect(depth("up", fleet(8, true))).toBe(4);
    expect(depth("destroy", fleet(8, true))).toBe(4);
  });

  it("adds the rate limit and our concurrency to the bound", () => {
    const ops = operations("up", fleet(3), new FleetState());
    const bounds = boundsOf(ops, 32, { latencyMs: 100, rateLimit: 8, concurrency: 4 });
    expect(bounds.boundSeconds).toBeCloseTo(32 / 8);
    expect(bounds.floorSeconds).toBeCloseTo(Math.max(32 / 8, (32 * 0.1) / 4));
    expect(resourceCount(fleet(3))).toBe(21);
  });
});

describe("where the fleet's time goes", () => {
  const usage = (cpuSeconds: number) => ({ processes: 1, peakMemoryMiB: 100, cpuSeconds, bytesWritten: 0 });
  const measured = {
    wallSeconds: 20,
    programCpuSeconds: 4,
    endedChildrenCpuSeconds: 30,
    processes: { engine: usage(20), provider: usage(6), emulator: usage(1) },
  } as unknown as PhaseResult;
  const timing = (seconds: number) => ({
    recoverySeconds: 0,
    stackSeconds: seconds,
    configSeconds: seconds,
    startupSeconds: 2 * seconds,
    stepsSeconds: 10 * seconds,
    finishSeconds: seconds,
    removeSeconds: 0,
  });
  const report = {
    timing: { scanSeconds: 1, catalogueSeconds: 0.5 },
    results: [
      { shard: "f-001", status: "done", timing: timing(1) },
      { shard: "f-002", status: "done", timing: timing(0.5) },
      { shard: "f-003", status: "skipped" },
    ],
  } as unknown as FleetReport;

  it("sums the shards' parts, leaves out skipped shards and attributes the children's CPU", () => {
    expect(timeBreakdown("up", report, measured)).toEqual({
      phase: "up",
      wallSeconds: 20,
      shardsRun: 2,
      scanSeconds: 1,
      catalogueSeconds: 0.5,
      prepareShardSeconds: 3,
      startupShardSeconds: 3,
      stepsShardSeconds: 15,
      finishShardSeconds: 1.5,
      engineCpuSeconds: 20,
      providerCpuSeconds: 6,
      runnerCpuSeconds: 4,
      unsampledCpuSeconds: 4,
    });
  });

  it("gives no CPU figure for a kind of process the operation never ran", () => {
    const none = { processes: 0, peakMemoryMiB: 0, cpuSeconds: 0, bytesWritten: 0 };
    const skipped = { ...measured, processes: { ...measured.processes, engine: none, provider: none } };
    const row = { tenants: 10, time: [timeBreakdown("preview", report, skipped)] } as unknown as FleetSweepRow;
    expect(row.time[0]).toMatchObject({ engineCpuSeconds: null, providerCpuSeconds: null });
    expect(timeMarkdown([row])).toContain(
      "| 10 | preview | 2 | 20.00 | 1.00 | 0.50 | 3.00 | 3.00 | 15.00 | 1.50 | - | - | 4.00 |",
    );
  });

  it("prints one line per size and operation", () => {
    const row = { tenants: 10, time: [timeBreakdown("up", report, measured)] } as unknown as FleetSweepRow;
    const table = timeMarkdown([row]);
    expect(table).toContain("| tenants | operation | shards run | wall s | scan s |");
    expect(table).toContain(
      "| 10 | up | 2 | 20.00 | 1.00 | 0.50 | 3.00 | 3.00 | 15.00 | 1.50 | 20.00 | 6.00 | 4.00 | 4.00 |",
    );
  });
});

describe("comparing runs", () => {
  const options = (...argv: string[]) => parseOptions(argv, projectRoot) as BenchOptions;
  const fleetWorkload = (...argv: string[]) => workloadOf(options("--fleet", ...argv), "fleet");

  it("gives each side's bench the command line without --against's own options", () => {
    const argv = [
      "--against",
      "v0.2.0",
      "--fleet",
      "--rounds",
      "2",
      "--tenants",
      "100",
      "--out=/tmp/x",
      "--save-baseline",
    ];
    expect(sideArguments(argv)).toEqual(["--fleet", "--tenants", "100"]);
  });

  it("builds only a commit git knows, and says which ref it does not", () => {
    expect(commitOf("HEAD")).toMatch(/^[0-9a-f]{40}$/);
    expect(() => commitOf("no-such-ref-of-issue-74")).toThrow(/--against no-such-ref-of-issue-74: no such commit/);
  });

  it("names a workload by what moves its figures, not by what it leaves out", () => {
    expect(fleetWorkload("--tenants", "100")).toBe(fleetWorkload("--tenants", "100", "--fleet-only"));
    expect(fleetWorkload("--tenants", "100")).not.toBe(fleetWorkload("--tenants", "200"));
    expect(fleetWorkload("--tenants", "100")).not.toBe(fleetWorkload("--tenants", "100", "--latency", "50"));
    expect(fleetWorkload("--tenants", "100")).not.toBe(workloadOf(options("--tenants", "100"), "bench"));
  });

  it("takes each figure's median over the runs, with its range", () => {
    expect(summarize([{ up: 3 }, { up: 1 }, { up: 2 }])).toEqual({ up: { median: 2, min: 1, max: 3 } });
    expect(summarize([{ up: 4, drift: 1 }, { up: 2 }])).toEqual({ up: { median: 3, min: 2, max: 4 } });
  });

  it("flags a figure 10% worse than the last release's or more, and none better or less worse", () => {
    const entry: BaselineEntry = {
      workload: "w",
      release: "0.2.0",
      commit: "5f5b421".padEnd(40, "0"),
      measuredAt: "2026-12-02T02:41:57.703Z",
      machine: machineDescription("3.246.0"),
      rounds: 4,
      figures: { "up s": 10, "drift s": 10, "up requests": 17 },
    };
    const text = beside([entry], "w", { "up s": 11.5, "drift s": 10.9, "up requests": 17 });
    expect(text).toContain("| up s | 10.00 | 11.50 | 1.15× | **15% worse** |");
    expect(text).toContain("| drift s | 10.00 | 10.90 | 1.09× |  |");
    expect(text).toContain("1 figure(s) 10% worse or more");
    expect(beside([entry], "another", { "up s": 20 })).toContain("No figures of the last release for this workload");
  });

  it("keeps the last release's figures with the machine they were measured on", () => {
    const entries = readBaselines(join(projectRoot, "bench", "baseline.json"));
    expect(entries.length).toBeGreaterThan(0);
    for (const entry of entries) {
      expect(entry.commit).toMatch(/^[0-9a-f]{40}$/);
      expect(entry.machine.cpus).toBeGreaterThan(0);
      expect(entry.machine.cpuModel).not.toBe("");
      expect(Object.values(entry.figures).every((value) => Number.isFinite(value))).toBe(true);
    }
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
  let report: BenchReport;
  let markdown: string;

  beforeAll(async () => {
    ({ report, markdown } = await runBench<BenchReport>(
      ["--tenants", "2", "--domains", "1", "--latency", "0"],
      "report",
    ));
  }, 300_000);

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
      // The description's create answer carries no secret: each webhook asks for one (the guides' carries it).
      ...(process.env.DMARC_EMULATOR_PROFILE === "guides"
        ? {}
        : { "POST /v1/webhooks/:webhookId/regenerate-secret": 2 }),
    };
    // The program and the provider process each obtain a token; the baseline's one client, one.
    expect(pulumi.up?.requestsByRoute).toEqual({ ...creates, "POST /auth/token": 2 });
    expect(baseline.up?.requestsByRoute).toEqual({ ...creates, "POST /auth/token": 1 });
    // A no-change preview: only the program's catalogue read.
    expect(pulumi.preview?.requestsByRoute).toEqual({ "POST /auth/token": 1, "GET /v1/partners/plans": 1 });
    for (const phase of ["refresh", "destroy"] as const) {
      expect(pulumi[phase]?.requestsByRoute).toEqual(baseline[phase]?.requestsByRoute);
    }
    // One list per organisation for its domains (which name their group too), subscriptions and
    // (the owner here) webhooks, one of the partner's organisations, and the provider's token:
    // 3 per tenant and 2 per run.
    expect(pulumi.refresh?.requestsByRoute).toEqual({
      "POST /auth/token": 1,
      "GET /v1/organizations": 1,
      "GET /v1/domains": 2,
      "GET /v1/webhooks/owner/:ownerId": 2,
      "GET /v1/partners/subscriptions": 2,
    });
    expect(pulumi.refresh?.requestsPerTenant).toBe(4);
    expect(pulumi.destroy?.requestsByRoute).toMatchObject({
      "DELETE /v1/organizations/:organizationId": 2,
      "POST /v1/partners/subscriptions/:subscriptionId/cancel": 2,
    });
    expect(pulumi.destroy?.requests).toBe(15);
    const secretRequests = process.env.DMARC_EMULATOR_PROFILE === "guides" ? 0 : 2;
    expect(pulumi.up?.bounds).toMatchObject({ requests: 15 + secretRequests, depth: 4, boundSeconds: 0 });
    expect(pulumi.up?.requestsPerTenant).toBe((15 + secretRequests) / 2);
    // Not rate-limited: no time against the rate.
    expect(pulumi.up?.wallToRate).toBeNull();
    expect(pulumi.up?.requestTiming?.spanToRate).toBeNull();
  });

  it("splits each phase's wall time at its first request and its last answer", () => {
    for (const result of [...report.phases, ...report.baseline]) {
      const timing = result.requestTiming;
      if (!timing) throw new Error(`${result.runner} ${result.phase}: no request timing`);
      const parts = [timing.beforeFirstRequestSeconds, timing.requestSpanSeconds, timing.afterLastAnswerSeconds];
      for (const part of parts) expect(part).toBeGreaterThanOrEqual(0);
      const sum = parts.reduce((total, part) => total + part, 0);
      // Two clocks (the bench's and the emulator's, on one machine) read milliseconds apart.
      expect(Math.abs(sum - result.wallSeconds), `${result.runner} ${result.phase}`).toBeLessThan(0.05);
    }
    // Pulumi's processes start before its first request; the baseline's client sends at once.
    const up = byPhase(report.phases).up?.requestTiming;
    expect(up?.beforeFirstRequestSeconds).toBeGreaterThan(
      byPhase(report.baseline).up?.requestTiming?.beforeFirstRequestSeconds ?? 0,
    );
  });

  it("measures the state, the engine and the provider process", () => {
    expect(report.state?.resourcesInCheckpoint).toBeGreaterThanOrEqual(11);
    expect(report.state?.bytesPerResource).toBeGreaterThan(report.state?.providerBytesPerResource ?? 0);
    expect(report.state?.providerBytesPerResource).toBeGreaterThan(0);
    const up = byPhase(report.phases).up;
    expect(up?.processes.engine.peakMemoryMiB).toBeGreaterThan(0);
    // Every phase's engine ran the dynamic provider for the tenants' resources: its process is named by what it
    // runs, whatever launched it, so its CPU and peak never read 0.
    for (const result of report.phases) {
      expect(result.processes.provider.processes, result.phase).toBeGreaterThan(0);
      expect(result.processes.provider.cpuSeconds, result.phase).toBeGreaterThan(0);
      expect(result.processes.provider.peakMemoryMiB, result.phase).toBeGreaterThan(0);
    }
    // Every engine run has ended by the phase's end, so its CPU is counted whole.
    expect(up?.endedChildrenCpuSeconds).toBeGreaterThan(0);
    expect(markdown).toContain("| phase | wall s | requests |");
    expect(markdown).toContain("| baseline destroy |");
    expect(markdown).toContain("| phase | requests per tenant | baseline requests per tenant |");
    expect(markdown).toContain("| refresh | 4.00 | 4.00 |");
  });

  it("reads its figures back for a comparison: times, CPU by process, requests, the ratio to the raw script", () => {
    const figures = figuresFrom("bench", report);
    const up = byPhase(report.phases).up as PhaseResult;
    expect(figures["up s"]).toBe(up.wallSeconds);
    expect(figures["up requests"]).toBe(up.requests);
    expect(figures["up engine CPU s"]).toBe(up.processes.engine.cpuSeconds);
    expect(figures["up CPU s, every process"]).toBeGreaterThanOrEqual(up.processes.engine.cpuSeconds);
    expect(figures["up ÷ raw script up"]).toBe(report.ratios.upToBaseline);
    expect(figures["state bytes per resource"]).toBe(report.state?.bytesPerResource);
    expect(Object.keys(figures)).toContain("destroy provider CPU s");
  });
});
