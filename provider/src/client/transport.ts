import type { IncomingHttpHeaders } from "node:http";
import type { SecureContext } from "node:tls";
import { type Dispatcher, Pool, ProxyAgent } from "undici";
import { isLoopbackHost } from "../api";
import { beyondProxyFailure, directFailureAdvice, proxyFailureOf } from "./proxy/failures";
import type { ProxyRoute } from "./proxy/route";
import { ProxyLegFault, ProxyTunnels } from "./proxy/tunnel";
import { certificateFailure } from "./tls/failures";
import { trustFor } from "./tls/trust";

// One attempt on the wire. It knows whether the request was handed to a
// socket, because that decides whether a failed state-changing call may be
// sent again: before that moment the service provably never saw it.

/** Answers above this size are refused: nothing the service sends legitimately comes close. */
const MAX_RESPONSE_BYTES = 5 * 1024 * 1024;

export interface WireRequest {
  origin: string;
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Path and query, already encoded. */
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface WireResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface AttemptLimits {
  connectTimeoutMs: number;
  requestTimeoutMs: number;
  /** The forward proxy requests go through; undefined: straight to the origin. */
  proxy?: ProxyRoute | undefined;
  /** A PEM file of certificate authorities trusted besides the others (tls/trust.ts); undefined: none. */
  caFile?: string | undefined;
}

/** The attempt produced no complete answer. */
export class TransportFault extends Error {
  override readonly name = "TransportFault";
  /** Trying again cannot help (an untrusted certificate does not fix itself). */
  readonly permanent: boolean;
  /** What the reader can do about it, where the fault says more than "check the address". */
  readonly advice: string | undefined;

  constructor(
    /** The request was handed to a socket, so the service may have received it. */
    readonly sent: boolean,
    message: string,
    options?: { cause: unknown; permanent?: boolean; advice?: string },
  ) {
    super(message, options);
    this.permanent = options?.permanent ?? false;
    this.advice = options?.advice;
  }
}

/** The answer exceeded {@link MAX_RESPONSE_BYTES}. */
export class ResponseTooLarge extends Error {
  override readonly name = "ResponseTooLarge";
  constructor(readonly status: number) {
    super(`an answer larger than ${MAX_RESPONSE_BYTES} bytes`);
  }
}

const pools = new Map<string, Dispatcher>();

// An idle connection is closed after this long even where the server would
// keep it for a minute or more: the provider's requests come in bursts, and
// a killed run's provider holding no connection shows at once that none of
// its calls is still in flight (recovery/orphans.ts).
const IDLE_CONNECTION_MS = 5_000;

/** The TLS settings of a connection that adds to Node.js's trust, or none where it adds nothing. */
function tlsSettings(caFile: string | undefined): { secureContext?: SecureContext } {
  const { context } = trustFor(caFile);
  return context === undefined ? {} : { secureContext: context };
}

// One keep-alive pool per address, proxy and trust. The connect timeout is a
// property of the pool, so it is part of the key; in practice every client
// of an address uses one.
function poolFor(origin: string, limits: AttemptLimits): Dispatcher {
  const { connectTimeoutMs, proxy, caFile } = limits;
  const key = JSON.stringify([origin, connectTimeoutMs, proxy?.url.href, proxy?.authorization, caFile]);
  let pool = pools.get(key);
  if (pool === undefined) {
    // The per-attempt timer in `send` bounds the whole exchange; undici's own
    // header and body timers would only add a second, differently sized limit.
    const options = {
      connectTimeout: connectTimeoutMs,
      headersTimeout: 0,
      bodyTimeout: 0,
      keepAliveMaxTimeout: IDLE_CONNECTION_MS,
    };
    // Trust is read only for a connection that speaks TLS: reading the system's store takes a moment.
    const tls = (scheme: string) => (scheme === "https:" ? tlsSettings(caFile) : {});
    pool =
      proxy === undefined
        ? new Pool(origin, { ...options, connect: tls(new URL(origin).protocol) })
        : new ProxyAgent({
            ...options,
            uri: proxy.url.href,
            ...(proxy.authorization ? { token: proxy.authorization } : {}),
            // The tunnel's own bound: the connect timeout bounds reaching the proxy, and then its answer to CONNECT.
            clientFactory: (url, factoryOptions) => new ProxyTunnels(url, factoryOptions, connectTimeoutMs),
            proxyTls: { timeout: connectTimeoutMs, ...tls(proxy.url.protocol) },
            requestTls: tls(new URL(origin).protocol),
          });
    pools.set(key, pool);
  }
  return pool;
}

export async function closePools(): Promise<void> {
  const open = [...pools.values()];
  pools.clear();
  await Promise.all(open.map((pool) => pool.close()));
}

function describe(error: unknown): { code: string; message: string } {
  const code = typeof (error as { code?: unknown })?.code === "string" ? (error as { code: string }).code : "";
  const message = error instanceof Error ? error.message : String(error);
  return { code, message };
}

/** How an attempt reaches its origin: through a proxy, or direct (and whether that is this machine), and what it trusts. */
interface Route {
  proxy: ProxyRoute | undefined;
  loopback: boolean;
  caFile: string | undefined;
}

const SERVICE = { name: "the service", addressedBy: "baseUrl" };

function classify(error: unknown, sent: boolean, route: Route): TransportFault {
  const { proxy, loopback, caFile } = route;
  const trust = () => trustFor(caFile);
  if (error instanceof ProxyLegFault && proxy) {
    const { message, permanent, advice } = proxyFailureOf(proxy, error.leg, error.message, trust);
    return new TransportFault(false, message, { cause: error, permanent, advice });
  }
  const { code, message } = describe(error);
  const detail = code ? `${message} (${code})` : message;
  const certificate = certificateFailure(code, SERVICE, trust);
  if (certificate) {
    const through = proxy ? ` (through the proxy ${proxy.shown}, chosen by ${proxy.chosenBy})` : "";
    return new TransportFault(sent, `${certificate.says}${through}: ${detail}`, {
      cause: error,
      permanent: true,
      advice: certificate.advice,
    });
  }
  if (proxy && !sent) {
    const failure = beyondProxyFailure(proxy, detail);
    return new TransportFault(false, failure.message, {
      cause: error,
      permanent: failure.permanent,
      advice: failure.advice,
    });
  }
  if (!sent) {
    const advice = loopback ? undefined : directFailureAdvice();
    return new TransportFault(false, `could not connect: ${detail}`, { cause: error, ...(advice ? { advice } : {}) });
  }
  return new TransportFault(true, `connection failed after the request was sent: ${detail}`, { cause: error });
}

type Settle = { resolve: (response: WireResponse) => void; reject: (error: unknown) => void };

/**
 * One attempt's handler: it collects the answer, enforces the size limit and
 * the per-attempt timer, and settles the attempt's promise exactly once.
 */
class Attempt implements Dispatcher.DispatchHandler {
  private sent = false;
  private timedOut = false;
  private settled = false;
  private controller: Dispatcher.DispatchController | undefined;
  private status = 0;
  private headers: IncomingHttpHeaders = {};
  private readonly chunks: Buffer[] = [];
  private received = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly requestTimeoutMs: number,
    private readonly route: Route,
    private readonly settle: Settle,
  ) {
    this.timer = setTimeout(() => this.timeOut(), requestTimeoutMs);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.timedOut) {
      controller.abort(this.timeoutFault());
      return;
    }
    this.sent = true;
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    responseHeaders: IncomingHttpHeaders,
  ): void {
    if (statusCode < 200) return;
    this.status = statusCode;
    this.headers = responseHeaders;
    const declared = Number(responseHeaders["content-length"]);
    if (Number.isFinite(declared) && declared > MAX_RESPONSE_BYTES) controller.abort(new ResponseTooLarge(statusCode));
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.received += chunk.length;
    if (this.received > MAX_RESPONSE_BYTES) {
      controller.abort(new ResponseTooLarge(this.status));
      return;
    }
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    this.finish(() =>
      this.settle.resolve({ status: this.status, headers: this.headers, body: Buffer.concat(this.chunks) }),
    );
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.finish(() => {
      if (error instanceof ResponseTooLarge || error instanceof TransportFault) this.settle.reject(error);
      else if (this.timedOut) this.settle.reject(this.timeoutFault());
      else this.settle.reject(classify(error, this.sent, this.route));
    });
  }

  /** The dispatch itself threw: nothing reached a socket. */
  failedToDispatch(error: unknown): void {
    this.finish(() => this.settle.reject(classify(error, false, this.route)));
  }

  private timeOut(): void {
    this.timedOut = true;
    if (this.controller) this.controller.abort(this.timeoutFault());
    // Not on a socket yet: fail now; onRequestStart aborts it on arrival, so it is never written.
    else this.finish(() => this.settle.reject(this.timeoutFault()));
  }

  private timeoutFault(): TransportFault {
    return new TransportFault(this.sent, `no complete answer within ${this.requestTimeoutMs} ms`);
  }

  private finish(outcome: () => void): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    outcome();
  }
}

/** Sends one request and collects the whole answer, or fails with a {@link TransportFault}. */
export function send(request: WireRequest, limits: AttemptLimits): Promise<WireResponse> {
  const pool = poolFor(request.origin, limits);
  return new Promise<WireResponse>((resolve, reject) => {
    const loopback = isLoopbackHost(new URL(request.origin).hostname);
    const route = { proxy: limits.proxy, loopback, caFile: limits.caFile };
    const attempt = new Attempt(limits.requestTimeoutMs, route, { resolve, reject });
    try {
      pool.dispatch(
        {
          origin: request.origin,
          path: request.path,
          method: request.method,
          headers: request.headers,
          body: request.body ?? null,
        },
        attempt,
      );
    } catch (error) {
      attempt.failedToDispatch(error);
    }
  });
}
