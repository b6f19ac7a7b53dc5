// The HTTP client of the DMARC partner API. It does not depend on Pulumi, so
// scripts and tests can use it as well as the provider's resources.

import { TokenResponse } from "../api";
import { DmarcClient } from "./client";
import { ClientCredentialsToken, credentialIdentity, StaticToken, type TokenSource } from "./credentials";
import { type ClientOptions, type ResolvedOptions, resolveOptions } from "./options";
import { closeBudgetStores } from "./pace/budgetChoice";
import { sharedPacer } from "./pace/pacing";
import type { TurnSource } from "./pace/turns";
import { rememberSecret } from "./redaction";
import { Requester } from "./requester";
import { closePools } from "./transport";

export { DmarcClient } from "./client";
export {
  DmarcApiError,
  DmarcConfigError,
  DmarcResponseError,
  DmarcTransportError,
  isNotFound,
  OrganizationGoneError,
  OutcomeUnknownError,
} from "./errors";
export {
  ALL_REPORT_TYPES,
  DOMAINS_PER_REQUEST,
  type PassRate,
  type ReportQuery,
  type ReportRange,
  type VolumeQuery,
  type VolumeRow,
} from "./families/reports";
export { NOTICE_PREFIX } from "./notice";
export {
  CLIENT_DEFAULTS,
  type ClientOptions,
  ClientOptionsSchema,
  describeIssues,
  type Pacing,
  PUBLISHED_REQUESTS_PER_MINUTE,
  pacingFor,
  proxyProblemFor,
} from "./options";
export { AdaptiveRate } from "./pace/adaptive";
export { BookedTurns } from "./pace/bookedTurns";
export { type BudgetChoice, budgetStoreFor, machineBudgetFolder } from "./pace/budgetChoice";
export { type BudgetKind, isPostgresUrl } from "./pace/budgetStore";
export { budgetEvents, formatRate } from "./pace/pacing";
export {
  type PacerAddress,
  PacerUnreachable,
  REFUSED_PATH,
  RemoteTurns,
  TURN_PATH,
  type TurnAnswer,
} from "./pace/remoteTurns";
export { SpacedTurns, type TurnSource, WINDOW_MS } from "./pace/turns";
export { redact } from "./redaction";

const clients = new Map<string, DmarcClient>();
const tokenSources = new Map<string, TokenSource>();
// Clients with different log or notice functions must not share one client object.
const logIds = new WeakMap<object, number>();
let nextLogId = 1;

function logId(log: ((line: string) => void) | undefined): number {
  if (log === undefined) return 0;
  const known = logIds.get(log);
  if (known !== undefined) return known;
  logIds.set(log, nextLogId);
  return nextLogId++;
}

/**
 * The client for a base address and credential. Clients are cached per
 * (address, credential, settings); every client of an address shares one
 * connection pool, every client of a credential one token, and the whole
 * process one pacer, set by the latest call: its rate, else the default for
 * its address.
 */
export function createClient(options: ClientOptions): DmarcClient {
  const resolved = resolveOptions(options);
  sharedPacer.configure({ ...resolved.pacing, notice: resolved.notice });
  const address = resolved.origin + resolved.basePath;
  const identity = credentialIdentity(resolved.credentials);
  const { credentials, log, notice, origin, basePath, pacing, ...tuning } = resolved;
  const key = JSON.stringify([address, identity, tuning, logId(log), logId(notice)]);
  let client = clients.get(key);
  if (client === undefined) {
    // The token call goes the client's way: through its proxy (with its credentials), or direct, trusting the same.
    const route = JSON.stringify([resolved.proxy?.url.href, resolved.proxy?.authorization, resolved.caFile]);
    const requester = new Requester(resolved, sharedPacer, tokenSourceFor(`${address} ${identity} ${route}`, resolved));
    client = new DmarcClient(requester, resolved.domainBatchWindowMs);
    clients.set(key, client);
  }
  return client;
}

function tokenSourceFor(key: string, options: ResolvedOptions): TokenSource {
  const { credentials } = options;
  if (credentials.kind === "static") return new StaticToken(credentials.accessToken);
  rememberSecret(credentials.clientSecret);
  let source = tokenSources.get(key);
  if (source === undefined) {
    const tokenCall = new Requester(options, sharedPacer);
    const form = {
      grant_type: "client_credentials",
      client_id: credentials.clientId,
      client_secret: credentials.clientSecret,
    };
    source = new ClientCredentialsToken(
      () =>
        tokenCall.call({
          operation: "obtain an access token",
          method: "POST",
          path: "/auth/token",
          form,
          schema: TokenResponse,
          // Asking for a token twice only issues two tokens.
          repeatable: true,
        }),
      options.tokenRenewMarginSeconds,
    );
    tokenSources.set(key, source);
  }
  return source;
}

/**
 * Requests this process has sent to any address so far (attempts, redirects
 * and token requests included): what the service's rate limit counts. A
 * long run reads it before and after to know its own figure.
 */
export function requestsSent(): number {
  return sharedPacer.requestsStarted;
}

/**
 * Every request of this process takes its turn from `turns` (a pacer that
 * other processes share, named `source` in the lines that say why a run
 * waits) instead of spacing them itself; undefined goes back to its own
 * pacing. Should `turns` fail, the process says so once and paces itself at
 * its configured rate, so a lost pacer never lets it send unpaced.
 */
export function takeTurnsFrom(turns: TurnSource | undefined, source?: string): void {
  sharedPacer.takeTurnsFrom(turns, source);
}

/**
 * Sends no more requests from this process: those waiting for their turn
 * fail with `reason`, and so does every later one; those already sent
 * finish. For a provider process whose engine is gone.
 */
export function stopSending(reason: Error): void {
  sharedPacer.stop(reason);
}

/** Requests of this process sent and not yet answered, or waiting for their turn. */
export function requestsInFlight(): number {
  return sharedPacer.slotsHeld;
}

/** Closes every pooled connection and forgets cached clients and tokens (end of a process, or between tests). */
export async function closeClients(): Promise<void> {
  clients.clear();
  tokenSources.clear();
  await Promise.all([closePools(), closeBudgetStores()]);
}
