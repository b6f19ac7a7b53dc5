import { z } from "zod";
import { isLoopbackHost } from "../api";
import { DmarcConfigError } from "./errors";
import { writeToStandardError } from "./notice";
import type { BudgetChoice } from "./pace/budgetChoice";
import { budgetStoreProblem, partnerKeyOf } from "./pace/budgetStore";
import { ProxyAddressError, type ProxyRoute, proxyAddressProblem, proxyFor } from "./proxy/route";
import { caFileProblem } from "./tls/trust";

/** The service's published rate limit: 60 requests a minute per customer (with daily limits besides). */
export const PUBLISHED_REQUESTS_PER_MINUTE = 60;

export const CLIENT_DEFAULTS = {
  connectTimeoutMs: 10_000,
  // Long enough for a slow list page, short enough that a hung connection is retried within the budget.
  requestTimeoutMs: 30_000,
  // A 429 without a hint is waited out over 8 tries (retry.ts); two more for faults on top.
  maxAttempts: 10,
  // Outlasts a 60-requests-per-minute window with room for backoff.
  maxRetryElapsedMs: 120_000,
  retryBaseDelayMs: 250,
  retryMaxDelayMs: 20_000,
  // 95% of the published limit, for every address but loopback (the emulator, unpaced): a sliding
  // window counts arrivals, so a new process's first request right after another's last (one more)
  // and network jitter (about two seconds' worth) need the room (docs/api-assumptions.md).
  requestsPerMinute: PUBLISHED_REQUESTS_PER_MINUTE * 0.95,
  maxConcurrency: 16,
  // The published limit's window: a sliding minute.
  rateLimitWindowSeconds: 60,
  // Tokens can live as little as 300 s; a minute leaves room for a slow renewal.
  tokenRenewMarginSeconds: 60,
  // The engine starts a tenant's domain creates within milliseconds of each other.
  domainBatchWindowMs: 25,
} as const;

const rate = z.number({ message: "must be a number" }).min(0, { message: "must be at least 0 (0 turns pacing off)" });

const lineSink = z.custom<(line: string) => void>((value) => typeof value === "function");

function wholeNumber(min: number) {
  return z
    .number({ message: "must be a number" })
    .int({ message: "must be a whole number" })
    .min(min, { message: `must be at least ${min}` });
}

/** A refinement that reports what `problemOf` finds wrong with a value, in its words. */
function reportProblem(problemOf: (value: string) => string | undefined) {
  return (value: string, ctx: z.RefinementCtx) => {
    const problem = problemOf(value);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  };
}

/** Why a base address cannot be used, or undefined when it can. */
function baseUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "is not an absolute URL such as https://api.example.com";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return `must use https:// (got ${url.protocol})`;
  if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) {
    return `uses plain http:// to a host that is not this machine (${url.origin}); the token would travel unencrypted. Use https:// (plain http is accepted for loopback hosts such as 127.0.0.1 only)`;
  }
  if (url.username !== "" || url.password !== "") {
    return "must not carry a user name or password; pass credentials as clientId/clientSecret";
  }
  if (url.search !== "" || url.hash !== "") return "must not carry a query string or fragment";
  return undefined;
}

/**
 * Every client option, with its validation and default: the one schema behind
 * both `createClient` and the provider's `dmarc:*` stack configuration (which
 * adds `partnerId`), so the two can never disagree.
 */
export const ClientOptionsSchema = z
  .object({
    baseUrl: z
      .string({ message: "is required: the service's root address, such as https://api.example.com" })
      .superRefine(reportProblem(baseUrlProblem))
      .describe(
        "Root address of the service, such as `https://api.example.com`. Required: there is no default production address.",
      ),
    accessToken: z
      .string()
      .min(1)
      .optional()
      .describe("A static bearer token. It cannot be renewed, so a long run should prefer clientId/clientSecret."),
    clientId: z
      .string()
      .min(1)
      .optional()
      .describe("OAuth 2.0 client id, exchanged with clientSecret at `POST {baseUrl}/auth/token`."),
    clientSecret: z
      .string()
      .min(1)
      .optional()
      .describe("OAuth 2.0 client secret, exchanged with clientId at `POST {baseUrl}/auth/token`."),
    connectTimeoutMs: wholeNumber(1)
      .default(CLIENT_DEFAULTS.connectTimeoutMs)
      .describe(
        "Time allowed to open a connection, in milliseconds; through a proxy, to reach the proxy and again for its answer to CONNECT.",
      ),
    requestTimeoutMs: wholeNumber(1)
      .default(CLIENT_DEFAULTS.requestTimeoutMs)
      .describe("Time allowed for one attempt, from sending to the last byte of the answer, in milliseconds."),
    maxAttempts: wholeNumber(1).default(CLIENT_DEFAULTS.maxAttempts).describe("Tries per call, the first included."),
    maxRetryElapsedMs: wholeNumber(0)
      .default(CLIENT_DEFAULTS.maxRetryElapsedMs)
      .describe("No retry starts later than this after the first attempt, in milliseconds."),
    retryBaseDelayMs: wholeNumber(0)
      .default(CLIENT_DEFAULTS.retryBaseDelayMs)
      .describe("Backoff before the first retry; doubles per retry, with full jitter."),
    retryMaxDelayMs: wholeNumber(0)
      .default(CLIENT_DEFAULTS.retryMaxDelayMs)
      .describe("Ceiling of one backoff delay (a longer wait the service asks for is still honoured)."),
    requestsPerMinute: rate
      .optional()
      .describe(
        "Requests a minute across every client in the process; 0 turns pacing off. Unset: 57 (95% of the published 60) for the service, 0 for a loopback address (the emulator). Process-wide: the latest createClient call applies to all clients.",
      ),
    requestsPerSecond: rate
      .optional()
      .describe(
        "The same limit per second (requestsPerMinute ÷ 60), as earlier releases took it; requestsPerMinute wins when both are set (so the fleet's share of its budget beats an older setting).",
      ),
    maxConcurrency: wholeNumber(1)
      .optional()
      .describe("Requests in flight across every client in the process, set like requestsPerMinute."),
    rateLimitWindowSeconds: wholeNumber(1)
      .default(CLIENT_DEFAULTS.rateLimitWindowSeconds)
      .describe(
        "The window the service counts its rate limit over, in seconds: the published minute. Pacing keeps requestsPerMinute's share of it in any such window and, slowed by a 429, measures its own share of the limit over it. For a service (or the emulator) whose window is not a minute. Process-wide, set like requestsPerMinute.",
      ),
    budgetStore: z
      .string()
      .superRefine(reportProblem(budgetStoreProblem))
      .optional()
      .describe(
        'Where every run of the partner books its requests\' turns, so that together they keep to one pace: a postgres:// URL (a database every CI job reaches), "machine" (this machine\'s runs; or "machine:<folder>"), "off" (the run paces alone, slowing down on 429s), or "auto" (unset): a PostgreSQL state backend\'s database when the runs share one, else this machine.',
      ),
    tokenRenewMarginSeconds: wholeNumber(0)
      .default(CLIENT_DEFAULTS.tokenRenewMarginSeconds)
      .describe("A token is renewed this long before it expires (at most half its lifetime)."),
    domainBatchWindowMs: wholeNumber(0)
      .default(CLIENT_DEFAULTS.domainBatchWindowMs)
      .describe(
        "How long a domain create declared without a count of its siblings waits for others of its organisation, to send them as one `POST /v1/domains/batch`, in milliseconds; 0 sends each alone.",
      ),
    httpsProxy: z
      .string()
      .superRefine(reportProblem(proxyAddressProblem))
      .optional()
      .describe(
        "The forward proxy every request to the service goes through, such as `http://proxy.example.com:3128` (credentials as `http://user:password@host:port`, kept secret). Unset: the HTTPS_PROXY (or https_proxy) environment variable, as curl and Go read it. Never used for a loopback address.",
      ),
    noProxy: z
      .string()
      .optional()
      .describe(
        "Hosts reached without the proxy, comma-separated as NO_PROXY is: `*`, host names (`example.com` and its subdomains; `.example.com` its subdomains only), IP addresses, CIDR ranges (`10.0.0.0/8`), each optionally with `:port`. Unset: the NO_PROXY (or no_proxy) environment variable.",
      ),
    caFile: z
      .string()
      .superRefine(reportProblem(caFileProblem))
      .optional()
      .describe(
        "A PEM file of one or more certificate authorities to trust besides the operating system's store, Node.js's own list and NODE_EXTRA_CA_CERTS: a company's CA (of the service's address, a TLS-inspecting proxy or an https:// proxy) for this stack or run alone. A relative path is read from the folder the provider runs in.",
      ),
    log: lineSink
      .optional()
      .describe("Receives one debug line per attempt (method, path, status, attempt, ms), secrets redacted."),
    notice: lineSink
      .optional()
      .describe(
        "Receives a line whenever calls wait on the rate limit, saying how long and why; default standard error.",
      ),
  })
  .superRefine((options, ctx) => {
    const hasClient = options.clientId !== undefined || options.clientSecret !== undefined;
    const rule: CredentialRule | undefined =
      options.accessToken !== undefined && hasClient
        ? "conflict"
        : options.accessToken === undefined && !hasClient
          ? "missing"
          : hasClient && (options.clientId === undefined || options.clientSecret === undefined)
            ? "incomplete"
            : undefined;
    if (rule)
      ctx.addIssue({ code: "custom", path: [], message: CREDENTIAL_RULES[rule]((name) => name), params: { rule } });
  });

/** How options are named in a message: as client options, or as the provider's `dmarc:*` keys. */
export type OptionNamer = (option: string) => string;

/** The credential rules, with their messages in the caller's names for the options. */
const CREDENTIAL_RULES = {
  conflict: (name: OptionNamer) =>
    `Both ${name("accessToken")} and ${name("clientId")}/${name("clientSecret")} are set: set either, not both.`,
  missing: (name: OptionNamer) =>
    `No credentials: set ${name("clientId")} and ${name("clientSecret")} (preferred), or ${name("accessToken")}.`,
  incomplete: (name: OptionNamer) => `${name("clientId")} and ${name("clientSecret")} must be set together.`,
} as const;
type CredentialRule = keyof typeof CREDENTIAL_RULES;

export type ClientOptions = z.input<typeof ClientOptionsSchema>;
type ValidOptions = z.output<typeof ClientOptionsSchema>;

/**
 * One sentence per problem, naming each option as `name` does and the value
 * given (`given` answers undefined for secrets, which are never shown).
 */
export function describeIssues(
  issues: readonly z.core.$ZodIssue[],
  name: OptionNamer,
  given: (option: string) => unknown,
): string[] {
  return issues.map((issue) => {
    const rule = issue.code === "custom" ? (issue.params?.rule as CredentialRule | undefined) : undefined;
    if (rule) return CREDENTIAL_RULES[rule](name);
    const option = String(issue.path[0] ?? "");
    const value = given(option);
    return `${name(option)} ${issue.message}${value === undefined ? "" : `; got ${JSON.stringify(value)}`}.`;
  });
}

// A proxy's address may carry its credentials.
const SECRET_OPTIONS: ReadonlySet<string> = new Set(["accessToken", "clientSecret", "httpsProxy"]);

/** Validates options with {@link ClientOptionsSchema}, failing with every problem named. */
function validateOptions(options: ClientOptions): ValidOptions {
  const parsed = ClientOptionsSchema.safeParse(options);
  if (parsed.success) return parsed.data;
  const problems = describeIssues(
    parsed.error.issues,
    (option) => option,
    (option) => (SECRET_OPTIONS.has(option) ? undefined : (options as Record<string, unknown>)[option]),
  );
  throw new DmarcConfigError(`The client options cannot be used: ${problems.join(" ")}`);
}

export type Credentials =
  | { kind: "static"; accessToken: string }
  | { kind: "clientCredentials"; clientId: string; clientSecret: string };

export interface ResolvedOptions {
  /** Origin of every request, such as `https://api.example.com`. */
  origin: string;
  /** Path prefix of the base address without a trailing slash (usually empty). */
  basePath: string;
  credentials: Credentials;
  connectTimeoutMs: number;
  requestTimeoutMs: number;
  maxAttempts: number;
  maxRetryElapsedMs: number;
  retryBaseDelayMs: number;
  retryMaxDelayMs: number;
  tokenRenewMarginSeconds: number;
  domainBatchWindowMs: number;
  log: ((line: string) => void) | undefined;
  notice: (line: string) => void;
  /** The forward proxy requests go through, from the settings or the environment; undefined: direct. */
  proxy: ProxyRoute | undefined;
  /** The PEM file of certificate authorities trusted besides the others (caFile); undefined: none. */
  caFile: string | undefined;
  /** The process-wide pacing this client asks for. */
  pacing: Pacing;
}

/** How fast the process sends, and why at that rate. */
export interface Pacing {
  requestsPerMinute: number;
  maxConcurrency: number;
  /** The window the service counts its limit over, in milliseconds. */
  windowMs: number;
  /** Where the rate comes from, in words, for the lines that say why a run waits. */
  source: string;
  /** Where the partner's runs share the budget. */
  budget: BudgetChoice;
}

/**
 * The rate set (requestsPerMinute before requestsPerSecond), else the
 * default for the address: the published limit's 95% for the service,
 * unpaced on loopback.
 */
function pacingOf(options: ValidOptions, url: URL): Pacing {
  const shared = {
    maxConcurrency: options.maxConcurrency ?? CLIENT_DEFAULTS.maxConcurrency,
    windowMs: options.rateLimitWindowSeconds * 1000,
    budget: budgetOf(options, url),
  };
  if (options.requestsPerMinute !== undefined) {
    return { requestsPerMinute: options.requestsPerMinute, source: "requestsPerMinute", ...shared };
  }
  if (options.requestsPerSecond !== undefined) {
    return { requestsPerMinute: options.requestsPerSecond * 60, source: "requestsPerSecond", ...shared };
  }
  if (isLoopbackHost(url.hostname)) {
    return { requestsPerMinute: 0, source: `the default for a loopback address (${url.host})`, ...shared };
  }
  return {
    requestsPerMinute: CLIENT_DEFAULTS.requestsPerMinute,
    source: `the default for the service: ${Math.round((100 * CLIENT_DEFAULTS.requestsPerMinute) / PUBLISHED_REQUESTS_PER_MINUTE)}% of its published ${PUBLISHED_REQUESTS_PER_MINUTE} a minute`,
    ...shared,
  };
}

/**
 * The partner's budget: the store set, and whose it is. The service counts
 * a partner's requests by its credentials, so the key is the address and
 * the client id (the token's hash for a static token), never the secret:
 * a rotated secret keeps its budget.
 */
function budgetOf(options: ValidOptions, url: URL): BudgetChoice {
  const identity = options.clientId ?? `token:${options.accessToken ?? ""}`;
  return {
    setting: options.budgetStore,
    partner: partnerKeyOf(`${url.origin}${url.pathname.replace(/\/+$/, "")}`, identity),
  };
}

/** The pacing a client with these options asks for (the fleet divides its rate among shards). */
export function pacingFor(options: ClientOptions): Pacing {
  const valid = validateOptions(options);
  return pacingOf(valid, new URL(valid.baseUrl));
}

/**
 * Why the proxy these options choose (their own, else the environment's)
 * cannot be used, or undefined: for a check at preview, before any client.
 */
export function proxyProblemFor(options: ClientOptions): string | undefined {
  const valid = validateOptions(options);
  try {
    proxyFor(new URL(valid.baseUrl), valid);
    return undefined;
  } catch (error) {
    if (error instanceof ProxyAddressError) return error.message;
    throw error;
  }
}

export function resolveOptions(options: ClientOptions): ResolvedOptions {
  const valid = validateOptions(options);
  const { baseUrl, accessToken, clientId, clientSecret, log, notice, httpsProxy, noProxy, caFile, ...rest } = valid;
  const { requestsPerMinute, requestsPerSecond, maxConcurrency, budgetStore, rateLimitWindowSeconds, ...tuning } = rest;
  const url = new URL(baseUrl);
  const credentials: Credentials = accessToken
    ? { kind: "static", accessToken }
    : { kind: "clientCredentials", clientId: clientId as string, clientSecret: clientSecret as string };
  return {
    origin: url.origin,
    basePath: url.pathname.replace(/\/+$/, ""),
    credentials,
    ...tuning,
    log,
    notice: notice ?? writeToStandardError,
    proxy: proxyFor(url, { httpsProxy, noProxy }),
    caFile,
    pacing: pacingOf(valid, url),
  };
}
