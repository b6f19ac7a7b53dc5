import { availableParallelism } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

export const USAGE = `usage: npm run bench [-- options]
  --tenants <n>            tenants in the fleet (default 50)
  --domains <n>            domains per tenant (default 3)
  --latency <ms>           latency the emulator adds to every API request (default 25)
  --rate-limit <n>         requests per second the emulator admits, 429 beyond (default off)
  --rate-limit-hints <h>   what its 429 says of when to come back: both (Retry-After and
                           retryAfterSeconds), header, body, or none as the published example (default both)
  --parallel <n>           Pulumi's --parallel, and the baseline's resource operations in flight
                           (default Pulumi's own: 4 x CPU cores)
  --pace <n>               the provider's requestsPerSecond pacing (default off: the client's default
                           on loopback, where the emulator runs; 57 a minute against the service)
  --max-concurrency <n>    the provider's maxConcurrency (default the client's, 16)
  --skip-checkpoints       PULUMI_SKIP_CHECKPOINTS=true: the file backend writes the state once, at the end
  --sweep                  time up (and destroy) for 10, 50, 100 and 200 tenants and draw time against N
  --sizes <list>           tenant counts of the sweep (default 10,50,100,200)
  --fleet                  the fleet runner (shard stacks side by side) against one stack and the baseline,
                           per tenant, for --tenants or every --sizes of --sweep
  --shard-size <n>         tenants per shard with --fleet (default the runner's)
  --concurrency <n>        shards at once with --fleet (default the runner's: the cores)
  --fleet-only             with --fleet: no single stack beside the fleet (minutes at 100 tenants and more)
  --import                 an account of --tenants organisations made through the client, then
                           dmarc-fleet import, import --check and the fleet's up of the file written
  --enforce                an account of --tenants organisations made through the client, every domain
                           on a policy ramp two report weeks old, then one dmarc-fleet enforce: its requests
  --publish                the fleet runner's up of --tenants (or every --sizes of --sweep) without and with
                           every record published by RFC 2136 to a local BIND 9, a no-change up, drift and
                           destroy; records per second, requests to the service, added cost per tenant
  --budget                 one partner's runs at once at the published 60 requests a minute: two fleets of
                           --tenants (default 12) on one machine, three CI jobs on one PostgreSQL backend,
                           two fleets with no budget store; each one's share of the limit and its 429s
  --plugin                 --tenants tenants (one domain and two in turn, a group, a subscription, a webhook
                           and an invitation each) declared by one TypeScript program through the dynamic
                           resources, then through the plugin's generated SDK: up, a no-change preview and
                           destroy, CPU by process and per resource, state bytes per resource
  --plugin-executable      with --plugin: the plugin's executable (scripts/plugin/) serves the SDK's
                           side instead of the npm package's launcher, node on dist/plugin/main.js
  --page                   the fleet page (dmarc-fleet report --html) for --tenants (default 1000 here) with
                           --domains each: its size and headless chromium's load-event time
  --against <git ref>      the same bench on that commit (built once in a git worktree of its own) and on this
                           checkout, --rounds times each, alternating; both sides' figures and their ratio
                           (plain, --sweep and --fleet; the others are not compared)
  --rounds <n>             runs of each side with --against (default 3): medians, and the range
  --save-baseline          write this run's figures (with --against, the ref's) to bench/baseline.json as the
                           last release's, with the machine; every run prints its figures beside them
  --out <dir>              where report.json, report.md (sweep.json, sweep.md, sweep.svg, plugin.json, plugin.md) go
                           (default .cache/bench)
  --verbose                stream the engine's output to stderr`;

/** Pulumi's default --parallel when the flag is unset: GOMAXPROCS x 4 (pkg/cmd/pulumi/operations/up.go). */
function pulumiDefaultParallel(): number {
  const fromEnv = Number(process.env.PULUMI_PARALLEL);
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : availableParallelism() * 4;
}

/** The provider client's default maxConcurrency (CLIENT_DEFAULTS in provider/src/client/options.ts). */
export const CLIENT_MAX_CONCURRENCY = 16;

export interface BenchOptions {
  tenants: number;
  domains: number;
  latencyMs: number;
  /** Requests per second the emulator admits; undefined for no limit. */
  rateLimit: number | undefined;
  /** What the emulator's 429 says of when to come back. */
  rateLimitHints: RateLimitHints;
  /** Value passed to Pulumi, or undefined to leave Pulumi's default. */
  parallelFlag: number | undefined;
  /** Resource operations in flight: the flag, or what Pulumi uses without it. */
  parallel: number;
  pace: number | undefined;
  maxConcurrency: number | undefined;
  skipCheckpoints: boolean;
  sweep: number[] | undefined;
  fleet: boolean;
  import: boolean;
  publish: boolean;
  enforce: boolean;
  page: boolean;
  budget: boolean;
  plugin: boolean;
  pluginExecutable: boolean;
  shardSize: number | undefined;
  concurrency: number | undefined;
  fleetOnly: boolean;
  /** The git ref `--against` compares this checkout with; undefined for a plain run. */
  against: string | undefined;
  rounds: number;
  saveBaseline: boolean;
  outDir: string;
  verbose: boolean;
}

export class UsageError extends Error {
  override name = "UsageError";
}

function whole(name: string, raw: string | undefined, fallback: number | undefined, min: number): number | undefined {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new UsageError(`--${name} must be a whole number of at least ${min}; got "${raw}"`);
  }
  return value;
}

function positive(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new UsageError(`--${name} must be a positive number; got "${raw}"`);
  return value;
}

const DEFAULT_SWEEP = [10, 50, 100, 200];

/** The benches whose figures are not compared with another commit's or the last release's. */
export const UNCOMPARED = ["budget", "plugin", "import", "enforce", "publish", "page"] as const;

/** Runs of each side with --against: three give a median that one slow run on a shared machine does not move. */
const DEFAULT_ROUNDS = 3;

/** Each fleet of the budget's scenarios: 12 tenants, as two pipelines of one partner were tried with. */
const BUDGET_TENANTS = 12;

/** The fleet page's size the issue sets its targets for: under 5 MB, load event under 2 s. */
const PAGE_TENANTS = 1000;

const RATE_LIMIT_HINTS = ["both", "header", "body", "none"] as const;
export type RateLimitHints = (typeof RATE_LIMIT_HINTS)[number];

function hintsOf(raw: string | undefined): RateLimitHints {
  if (raw === undefined) return "both";
  const found = RATE_LIMIT_HINTS.find((hints) => hints === raw);
  if (!found) throw new UsageError(`--rate-limit-hints must be one of ${RATE_LIMIT_HINTS.join(", ")}; got "${raw}"`);
  return found;
}

/** Parses the command line; undefined means --help was asked for. */
export function parseOptions(argv: string[], projectRoot: string): BenchOptions | undefined {
  let values: ReturnType<typeof parse>["values"];
  try {
    ({ values } = parse(argv));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help) return undefined;
  const parallelFlag = whole("parallel", values.parallel, undefined, 1);
  const sizes = values.sizes?.split(",").map((size) => whole("sizes", size.trim(), undefined, 1) as number);
  if (values.sizes !== undefined && !values.sweep) throw new UsageError("--sizes goes with --sweep");
  if (values["fleet-only"] && !values.fleet) throw new UsageError("--fleet-only goes with --fleet");
  if (values.rounds !== undefined && values.against === undefined) throw new UsageError("--rounds goes with --against");
  const uncompared = UNCOMPARED.find((flag) => values[flag]);
  if (uncompared && (values.against !== undefined || values["save-baseline"]))
    throw new UsageError(
      `--against and --save-baseline compare the plain bench, --sweep and --fleet, not --${uncompared}`,
    );
  return {
    tenants: whole(
      "tenants",
      values.tenants,
      values.page ? PAGE_TENANTS : values.budget ? BUDGET_TENANTS : 50,
      1,
    ) as number,
    domains: whole("domains", values.domains, 3, 1) as number,
    latencyMs: whole("latency", values.latency, 25, 0) as number,
    rateLimit: whole("rate-limit", values["rate-limit"], undefined, 1),
    rateLimitHints: hintsOf(values["rate-limit-hints"]),
    parallelFlag,
    parallel: parallelFlag ?? pulumiDefaultParallel(),
    pace: positive("pace", values.pace),
    maxConcurrency: whole("max-concurrency", values["max-concurrency"], undefined, 1),
    skipCheckpoints: values["skip-checkpoints"] ?? false,
    sweep: values.sweep ? (sizes ?? DEFAULT_SWEEP) : undefined,
    fleet: values.fleet ?? false,
    import: values.import ?? false,
    publish: values.publish ?? false,
    enforce: values.enforce ?? false,
    page: values.page ?? false,
    budget: values.budget ?? false,
    plugin: values.plugin ?? false,
    pluginExecutable: values["plugin-executable"] ?? false,
    shardSize: whole("shard-size", values["shard-size"], undefined, 1),
    concurrency: whole("concurrency", values.concurrency, undefined, 1),
    fleetOnly: values["fleet-only"] ?? false,
    against: values.against,
    rounds: whole("rounds", values.rounds, DEFAULT_ROUNDS, 1) as number,
    saveBaseline: values["save-baseline"] ?? false,
    outDir: resolve(values.out ?? join(projectRoot, ".cache", "bench")),
    verbose: values.verbose ?? false,
  };
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      tenants: { type: "string" },
      domains: { type: "string" },
      latency: { type: "string" },
      "rate-limit": { type: "string" },
      "rate-limit-hints": { type: "string" },
      parallel: { type: "string" },
      pace: { type: "string" },
      "max-concurrency": { type: "string" },
      "skip-checkpoints": { type: "boolean" },
      sweep: { type: "boolean" },
      sizes: { type: "string" },
      fleet: { type: "boolean" },
      import: { type: "boolean" },
      publish: { type: "boolean" },
      enforce: { type: "boolean" },
      page: { type: "boolean" },
      budget: { type: "boolean" },
      plugin: { type: "boolean" },
      "plugin-executable": { type: "boolean" },
      "shard-size": { type: "string" },
      concurrency: { type: "string" },
      "fleet-only": { type: "boolean" },
      against: { type: "string" },
      rounds: { type: "string" },
      "save-baseline": { type: "boolean" },
      out: { type: "string" },
      verbose: { type: "boolean" },
      help: { type: "boolean" },
    },
  });
}
