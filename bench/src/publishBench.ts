import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { closeClients } from "pulumi-dmarc-partner/client";
import { authoritativeRecords, PUBLISHED_TYPES, putDmarcRecord, removeRecord } from "pulumi-dmarc-partner/dns";
import { DEFAULT_SHARD_SIZE, type FleetOptions, type FleetReport, runFleet } from "pulumi-dmarc-partner/fleet";
import { limiter } from "./baseline";
import { dnsServersUnavailable, type RunningDnsServer, startDnsServer } from "./dnsServers";
import { type FleetSpec, fleetSpec, tenantsOf } from "./fleet";
import { benchFleetOptions, changesOf, type FleetSetup, type FleetSweepHooks, inventoryOf } from "./fleetSweep";
import type { PhaseResult } from "./report";

// `npm run bench -- --publish --tenants 100`: the bench's generated tenants
// deployed by the fleet runner twice, first without publishing, then with
// every domain's record published by RFC 2136 to a local BIND 9 (the tests'
// server starter, with a zone that holds every bench domain). It reports
// records per second, the service's requests of both `up`s route by route
// (publishing must add none), the added time and CPU per tenant, a second
// `up` with nothing to change (it must run no shard), `drift` (it must find
// none, asking BIND for every record), and `destroy` (it must leave no
// record), and the same records published by the DNS client alone.

/** The zone every bench domain (`d1.t001.bench.example`) is in. */
const BENCH_ZONE = "bench.example";
const KEY_SECRET_ENV = "DMARC_BENCH_DNS_KEY_SECRET";
const TTL = 300;
/** DNS queries or updates in flight when the bench counts or publishes records itself. */
const DNS_IN_FLIGHT = 16;

export interface PublishBenchHooks extends FleetSetup {
  outDir: string;
  domains: number;
  /** Resource operations in flight: the DNS client alone publishes this many records at once, as the engine would. */
  parallel: number;
  say(message: string): void;
  measure: FleetSweepHooks["measure"];
}

/** Requests of one route in the `up` without publishing and the one with it, where they differ. */
type RouteDifference = { route: string; plain: number; publishing: number };

/**
 * The routes of a domain's create: the client sends the creates of one
 * organisation that arrive within `dmarc:domainBatchWindowMs` as one batch,
 * so how many go each way depends on timing, not on publishing.
 */
const DOMAIN_CREATE_ROUTES = ["POST /v1/domains", "POST /v1/domains/batch"];

export interface PublishRow {
  tenants: number;
  records: number;
  shards: number;
  plainUp: PhaseResult;
  plainDestroy: PhaseResult;
  publishingUp: PhaseResult;
  /** A second `up` with nothing changed, publishing on. */
  noChangeUp: PhaseResult;
  /** Shards that second `up` ran (it must run none). */
  noChangeShardsRun: number;
  drift: PhaseResult;
  publishingDestroy: PhaseResult;
  /** The records BIND served after the `up` with publishing, and after its `destroy`. */
  servedAfterUp: number;
  servedAfterDestroy: number;
  /** Routes whose request counts differ between the two `up`s: at most the domain creates' split between single and batch. */
  routeDifferences: RouteDifference[];
  /** The same records written, then removed, by the DNS client alone, `parallel` at once. */
  dnsAlone: { publishSeconds: number; removeSeconds: number };
  loadAverage: { start: number; end: number };
}

export interface PublishBenchReport {
  domainsPerTenant: number;
  shardSize: number;
  concurrency: number;
  parallel: number;
  rows: PublishRow[];
}

function recordNames(spec: FleetSpec): string[] {
  return tenantsOf(spec).flatMap((tenant) => tenant.domains.map((domain) => `_dmarc.${domain}`));
}

/** How many of the names BIND serves a TXT record at, asked with its administrator key. */
async function servedCount(dns: RunningDnsServer, names: readonly string[]): Promise<number> {
  const limit = limiter(DNS_IN_FLIGHT);
  const types = Object.values(PUBLISHED_TYPES);
  const admin = dns.target(dns.adminKey);
  const found = await Promise.all(
    names.map((name) => limit(async () => (await authoritativeRecords(admin, BENCH_ZONE, name, types)).length > 0)),
  );
  return found.filter(Boolean).length;
}

/** Every name's record written, then removed, by the DNS client alone: the protocol's cost without Pulumi. */
async function dnsAlone(dns: RunningDnsServer, names: readonly string[], parallel: number) {
  const limit = limiter(parallel);
  const target = dns.target(dns.key);
  // The service's setup record's shape and length: v=DMARC1, a rua address naming the organisation.
  const record = (name: string) => ({
    zone: BENCH_ZONE,
    name,
    type: "TXT" as const,
    value: `v=DMARC1; p=none; rua=mailto:org_${randomBytes(12).toString("hex")}@rua.dmarc-emulator.test; fo=1`,
    ttl: TTL,
  });
  const records = names.map(record);
  const timed = async (work: () => Promise<unknown>) => {
    const start = performance.now();
    await work();
    return (performance.now() - start) / 1000;
  };
  const publishSeconds = await timed(() =>
    Promise.all(records.map((entry) => limit(() => putDmarcRecord(target, entry)))),
  );
  const removeSeconds = await timed(() =>
    Promise.all(records.map((entry) => limit(() => removeRecord(target, entry)))),
  );
  return { publishSeconds, removeSeconds };
}

function routeDifferences(plain: PhaseResult, publishing: PhaseResult): RouteDifference[] {
  const routes = [...new Set([...Object.keys(plain.requestsByRoute), ...Object.keys(publishing.requestsByRoute)])];
  return routes
    .sort()
    .map((route) => ({
      route,
      plain: plain.requestsByRoute[route] ?? 0,
      publishing: publishing.requestsByRoute[route] ?? 0,
    }))
    .filter((difference) => difference.plain !== difference.publishing);
}

function shardsRun(report: FleetReport): number {
  return report.results.filter((result) => result.status !== "skipped").length;
}

/** A fleet command's changes, the runner starting without a token as a new `dmarc-fleet` process would. */
async function fleetChanges(
  command: "up" | "drift" | "destroy",
  options: FleetOptions,
  check = (_: FleetReport) => {},
) {
  await closeClients();
  const report = await runFleet(command, options);
  check(report);
  return changesOf(report);
}

/** The `up` and `destroy` of the fleet without publishing: what the one with publishing is compared with. */
async function plainFleet(hooks: PublishBenchHooks, spec: FleetSpec) {
  const options = benchFleetOptions(hooks, spec.tenants, inventoryOf(spec));
  hooks.say(`publish bench: ${spec.tenants} tenants without publishing`);
  const up = await hooks.measure(spec, "up", () => fleetChanges("up", options));
  const empty = { ...options, inventory: inventoryOf({ ...spec, tenants: 0 }) };
  const destroy = await hooks.measure(spec, "destroy", () => fleetChanges("destroy", empty));
  return { up, destroy };
}

/** The fleet with publishing to BIND: `up`, an `up` with nothing to change, `drift`, `destroy`, each checked. */
async function publishingFleet(hooks: PublishBenchHooks, spec: FleetSpec, dns: RunningDnsServer) {
  const publishing = {
    rfc2136: { server: dns.address, zone: BENCH_ZONE, keyName: dns.key.name, keySecretEnv: KEY_SECRET_ENV, ttl: TTL },
  };
  const options = benchFleetOptions(hooks, spec.tenants, inventoryOf(spec, publishing));
  const names = recordNames(spec);
  hooks.say(`publish bench: ${spec.tenants} tenants publishing ${names.length} records to BIND at ${dns.address}`);
  let shards = 0;
  const up = await hooks.measure(spec, "up", () =>
    fleetChanges("up", options, (report) => {
      shards = report.shards.length;
    }),
  );
  const servedAfterUp = await servedCount(dns, names);
  let noChangeShardsRun = 0;
  const noChangeUp = await hooks.measure(spec, "up", () =>
    fleetChanges("up", options, (report) => {
      noChangeShardsRun = shardsRun(report);
    }),
  );
  hooks.say("publish bench: drift, a refresh in preview mode of every shard (every record asked of BIND)");
  const drift = await hooks.measure(spec, "refresh", () =>
    fleetChanges("drift", options, (report) => {
      const { differs, missing } = report.totals.objects;
      if (differs + missing > 0) throw new Error(`drift found ${differs} objects that differ and ${missing} missing`);
    }),
  );
  const empty = { ...options, inventory: inventoryOf({ ...spec, tenants: 0 }) };
  const destroy = await hooks.measure(spec, "destroy", () => fleetChanges("destroy", empty));
  const servedAfterDestroy = await servedCount(dns, names);
  return { up, noChangeUp, noChangeShardsRun, drift, destroy, servedAfterUp, servedAfterDestroy, shards };
}

async function publishRow(hooks: PublishBenchHooks, spec: FleetSpec, dns: RunningDnsServer): Promise<PublishRow> {
  const loadAtStart = loadavg()[0] ?? 0;
  const plain = await plainFleet(hooks, spec);
  const published = await publishingFleet(hooks, spec, dns);
  hooks.say(`publish bench: the same records through the DNS client alone, ${hooks.parallel} at once`);
  const names = recordNames(spec);
  return {
    tenants: spec.tenants,
    records: names.length,
    shards: published.shards,
    plainUp: plain.up,
    plainDestroy: plain.destroy,
    publishingUp: published.up,
    noChangeUp: published.noChangeUp,
    noChangeShardsRun: published.noChangeShardsRun,
    drift: published.drift,
    publishingDestroy: published.destroy,
    servedAfterUp: published.servedAfterUp,
    servedAfterDestroy: published.servedAfterDestroy,
    routeDifferences: routeDifferences(plain.up, published.up),
    dnsAlone: await dnsAlone(dns, names, hooks.parallel),
    loadAverage: { start: loadAtStart, end: loadavg()[0] ?? 0 },
  };
}

const cpuOf = (phase: PhaseResult) =>
  phase.processes.engine.cpuSeconds + phase.processes.provider.cpuSeconds + phase.programCpuSeconds;

/** One markdown table: its header, and a row of cells per entry. */
function table(header: readonly string[], rows: readonly (readonly (string | number)[])[]): string[] {
  return [
    `| ${header.join(" | ")} |`,
    `| ${header.map((title) => "-".repeat(title.length)).join(" | ")} |`,
    ...rows.map((cells) => `| ${cells.join(" | ")} |`),
  ];
}

function timeRow(row: PublishRow): (string | number)[] {
  const addedSeconds = row.publishingUp.wallSeconds - row.plainUp.wallSeconds;
  return [
    row.tenants,
    row.records,
    row.shards,
    row.plainUp.wallSeconds.toFixed(2),
    row.publishingUp.wallSeconds.toFixed(2),
    (addedSeconds / row.tenants).toFixed(3),
    ((cpuOf(row.publishingUp) - cpuOf(row.plainUp)) / row.tenants).toFixed(3),
    (row.records / row.publishingUp.wallSeconds).toFixed(1),
    (row.records / row.dnsAlone.publishSeconds).toFixed(0),
    row.noChangeUp.wallSeconds.toFixed(2),
    row.noChangeShardsRun,
    row.drift.wallSeconds.toFixed(2),
    row.publishingDestroy.wallSeconds.toFixed(2),
    `${row.servedAfterUp}, ${row.servedAfterDestroy}`,
    `${row.loadAverage.start.toFixed(1)}, ${row.loadAverage.end.toFixed(1)}`,
  ];
}

function requestRow(row: PublishRow): (string | number)[] {
  const differences = row.routeDifferences.map((d) => `${d.route}: ${d.plain} → ${d.publishing}`).join("; ");
  return [
    row.tenants,
    row.plainUp.requests,
    row.publishingUp.requests,
    (row.publishingUp.requests / row.tenants).toFixed(2),
    differences || "none",
    row.noChangeUp.requests,
    row.drift.requests,
    row.publishingDestroy.requests,
    row.plainUp.rateLimited + row.publishingUp.rateLimited,
  ];
}

function publishBenchMarkdown(report: PublishBenchReport): string {
  return [
    `Fleet with publishing to BIND 9: ${report.domainsPerTenant} domains per tenant, shards of ${report.shardSize}, ${report.concurrency} at once; the DNS client alone ${report.parallel} records at once.`,
    "",
    ...table(
      [
        "tenants",
        "records",
        "shards",
        "up s, no publishing",
        "up s, publishing",
        "added s per tenant",
        "added CPU s per tenant",
        "records/s in up",
        "records/s, DNS client alone",
        "no-change up s",
        "shards it ran",
        "drift s",
        "destroy s",
        "served after up, after destroy",
        "load (start, end)",
      ],
      report.rows.map(timeRow),
    ),
    "",
    "Requests to the service (the emulator's count):",
    "",
    ...table(
      [
        "tenants",
        "up, no publishing",
        "up, publishing",
        "per tenant",
        "routes that differ",
        "no-change up",
        "drift",
        "destroy",
        "429s in the ups",
      ],
      report.rows.map(requestRow),
    ),
    "",
  ].join("\n");
}

/** Fails the run when publishing broke a promise: a record missing or left behind, a shard run for nothing, a request more. */
function checkRow(row: PublishRow): void {
  const broken = [
    row.servedAfterUp !== row.records && `BIND served ${row.servedAfterUp} of ${row.records} records after up`,
    row.servedAfterDestroy !== 0 && `BIND still served ${row.servedAfterDestroy} records after destroy`,
    row.noChangeShardsRun !== 0 && `the no-change up ran ${row.noChangeShardsRun} shards`,
    ...row.routeDifferences
      .filter((difference) => !DOMAIN_CREATE_ROUTES.includes(difference.route))
      .map((d) => `publishing changed the requests of ${d.route}: ${d.plain} without, ${d.publishing} with`),
  ].filter((problem): problem is string => typeof problem === "string");
  if (broken.length > 0) throw new Error(`publish bench at ${row.tenants} tenants: ${broken.join("; ")}`);
}

/** Starts BIND, runs every size, writes publish.{md,json}; returns the markdown. */
export async function publishBench(
  hooks: PublishBenchHooks,
  sizes: readonly number[],
  plans: Parameters<typeof fleetSpec>[0],
): Promise<string> {
  const unavailable = await dnsServersUnavailable();
  if (unavailable) throw new Error(`the publish bench needs BIND 9: ${unavailable}`);
  const dns = await startDnsServer("bind", "hmac-sha256", { zone: BENCH_ZONE });
  process.env[KEY_SECRET_ENV] = dns.key.secret;
  const rows: PublishRow[] = [];
  try {
    for (const tenants of sizes) rows.push(await publishRow(hooks, fleetSpec(plans, tenants, hooks.domains), dns));
  } finally {
    delete process.env[KEY_SECRET_ENV];
    await dns.stop();
  }
  const report: PublishBenchReport = {
    domainsPerTenant: hooks.domains,
    shardSize: hooks.shardSize ?? DEFAULT_SHARD_SIZE,
    concurrency: hooks.concurrency ?? availableParallelism(),
    parallel: hooks.parallel,
    rows,
  };
  const markdown = publishBenchMarkdown(report);
  writeFileSync(join(hooks.outDir, "publish.json"), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(hooks.outDir, "publish.md"), markdown);
  hooks.say(`wrote publish.md and publish.json to ${hooks.outDir}`);
  for (const row of rows) checkRow(row);
  return markdown;
}
