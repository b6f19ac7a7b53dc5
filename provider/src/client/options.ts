import { isLoopbackHost } from "../api";
import { DmarcConfigError } from "./errors";

export interface ClientOptions {
  /** Root address of the service, such as `https://api.example.com`. Required: there is no default production address. */
  baseUrl: string;
  /** A static bearer token. It cannot be renewed, so a long run should prefer clientId/clientSecret. */
  accessToken?: string;
  /** OAuth 2.0 client credentials, exchanged at `POST {baseUrl}/auth/token`. */
  clientId?: string;
  clientSecret?: string;
  /** Time allowed to open a connection. Default {@link CLIENT_DEFAULTS}. */
  connectTimeoutMs?: number;
  /** Time allowed for one attempt, from sending to the last byte of the answer. Default {@link CLIENT_DEFAULTS}. */
  requestTimeoutMs?: number;
  /** Tries per call, the first included. Default {@link CLIENT_DEFAULTS}. */
  maxAttempts?: number;
  /** No retry starts later than this after the first attempt. Default {@link CLIENT_DEFAULTS}. */
  maxRetryElapsedMs?: number;
  /** Backoff before the first retry; doubles per retry, with full jitter. Default {@link CLIENT_DEFAULTS}. */
  retryBaseDelayMs?: number;
  /** Ceiling of one backoff delay (a longer wait the service asks for is still honoured). Default {@link CLIENT_DEFAULTS}. */
  retryMaxDelayMs?: number;
  /**
   * Requests per second across every client in the process; 0 turns pacing off. Default {@link CLIENT_DEFAULTS}.
   * Process-wide: the latest createClient call that sets it applies to all clients.
   */
  requestsPerSecond?: number;
  /** Requests in flight across every client in the process, set like requestsPerSecond. Default {@link CLIENT_DEFAULTS}. */
  maxConcurrency?: number;
  /** A token is renewed this long before it expires (at most half its lifetime). Default {@link CLIENT_DEFAULTS}. */
  tokenRenewMarginSeconds?: number;
  /** Receives one debug line per attempt (method, path, status, attempt, ms), secrets redacted. */
  log?: (line: string) => void;
}

export const CLIENT_DEFAULTS = {
  connectTimeoutMs: 10_000,
  // Long enough for a slow list page, short enough that a hung connection is retried within the budget.
  requestTimeoutMs: 30_000,
  maxAttempts: 6,
  // Outlasts a 60-requests-per-minute window with room for backoff.
  maxRetryElapsedMs: 120_000,
  retryBaseDelayMs: 250,
  retryMaxDelayMs: 20_000,
  // Off: the service's limit is not published per partner; 429 answers are absorbed by retries.
  requestsPerSecond: 0,
  maxConcurrency: 16,
  // Tokens can live as little as 300 s; a minute leaves room for a slow renewal.
  tokenRenewMarginSeconds: 60,
} as const;

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
  log: ((line: string) => void) | undefined;
}

export function resolveOptions(options: ClientOptions): ResolvedOptions {
  const { origin, basePath } = parseBaseUrl(options.baseUrl);
  return {
    origin,
    basePath,
    credentials: resolveCredentials(options),
    connectTimeoutMs: integer(options, "connectTimeoutMs", 1),
    requestTimeoutMs: integer(options, "requestTimeoutMs", 1),
    maxAttempts: integer(options, "maxAttempts", 1),
    maxRetryElapsedMs: integer(options, "maxRetryElapsedMs", 0),
    retryBaseDelayMs: integer(options, "retryBaseDelayMs", 0),
    retryMaxDelayMs: integer(options, "retryMaxDelayMs", 0),
    tokenRenewMarginSeconds: integer(options, "tokenRenewMarginSeconds", 0),
    log: options.log,
  };
}

/** Pacing settings the options set explicitly; unset ones leave the process-wide value alone. */
export function pacingOverrides(options: ClientOptions): { requestsPerSecond?: number; maxConcurrency?: number } {
  return {
    ...(options.requestsPerSecond === undefined ? {} : { requestsPerSecond: number(options, "requestsPerSecond", 0) }),
    ...(options.maxConcurrency === undefined ? {} : { maxConcurrency: integer(options, "maxConcurrency", 1) }),
  };
}

type NumericOption = keyof typeof CLIENT_DEFAULTS;

function number(options: ClientOptions, name: NumericOption, min: number): number {
  const value = options[name] ?? CLIENT_DEFAULTS[name];
  if (typeof value !== "number" || !Number.isFinite(value) || value < min) {
    throw new DmarcConfigError(`The client option ${name} must be a number of at least ${min}; got ${String(value)}.`);
  }
  return value;
}

function integer(options: ClientOptions, name: NumericOption, min: number): number {
  const value = number(options, name, min);
  if (!Number.isInteger(value)) {
    throw new DmarcConfigError(`The client option ${name} must be a whole number; got ${value}.`);
  }
  return value;
}

function parseBaseUrl(baseUrl: string): { origin: string; basePath: string } {
  if (typeof baseUrl !== "string" || baseUrl.trim() === "") {
    throw new DmarcConfigError(
      "The client needs baseUrl, the service's root address (for example https://api.example.com).",
    );
  }
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new DmarcConfigError(`baseUrl "${baseUrl}" is not an absolute URL such as https://api.example.com.`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new DmarcConfigError(`baseUrl must use https:// (got ${url.protocol}).`);
  }
  if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) {
    throw new DmarcConfigError(
      `baseUrl ${url.origin} uses plain http:// to a host that is not this machine; the token would travel unencrypted. Use https:// (plain http is accepted for loopback hosts such as 127.0.0.1 only).`,
    );
  }
  if (url.username !== "" || url.password !== "") {
    throw new DmarcConfigError(
      "baseUrl must not carry a user name or password; pass credentials as clientId/clientSecret.",
    );
  }
  if (url.search !== "" || url.hash !== "") {
    throw new DmarcConfigError("baseUrl must not carry a query string or fragment.");
  }
  return { origin: url.origin, basePath: url.pathname.replace(/\/+$/, "") };
}

function resolveCredentials(options: ClientOptions): Credentials {
  const { accessToken, clientId, clientSecret } = options;
  const hasClient = Boolean(clientId) || Boolean(clientSecret);
  if (accessToken && hasClient) {
    throw new DmarcConfigError("Set either accessToken or clientId/clientSecret, not both.");
  }
  if (accessToken) return { kind: "static", accessToken };
  if (clientId && clientSecret) return { kind: "clientCredentials", clientId, clientSecret };
  if (hasClient) throw new DmarcConfigError("clientId and clientSecret must be set together.");
  throw new DmarcConfigError("The client needs credentials: clientId and clientSecret (preferred), or accessToken.");
}
