import { setTimeout as sleep } from "node:timers/promises";
import type { z } from "zod";
import type { TokenSource } from "./credentials";
import { decodeBody, decodeServiceError } from "./decode";
import {
  type CallContext,
  DmarcApiError,
  DmarcResponseError,
  DmarcTransportError,
  type Effort,
  OutcomeUnknownError,
} from "./errors";
import { noticeLine, seconds } from "./notice";
import type { ResolvedOptions } from "./options";
import type { Pacer } from "./pace/pacing";
import { redact } from "./redaction";
import {
  boundedDelayMs,
  isRetryableStatus,
  requestedDelayMs,
  retryDelayMs,
  type WaitReason,
  waitReasonOf,
} from "./retry";
import { ResponseTooLarge, send, TransportFault, type WireRequest, type WireResponse } from "./transport";

// Runs one logical call: pacing, the bearer token, same-origin redirects,
// retries within the bounds, and the mapping of every outcome to a value or a
// typed error.

type Method = WireRequest["method"];

export interface CallSpec<S extends z.ZodType> {
  /** What is being done, in words, such as "create organization". */
  operation: string;
  method: Method;
  /** Path and query below the base address, already encoded. */
  path: string;
  json?: unknown;
  form?: Record<string, string>;
  /** Checks the answer's body; without it the body is ignored. */
  schema?: S;
  /**
   * The call may be sent again after it possibly reached the service: reads,
   * PUT, PATCH, DELETE, and POSTs whose repetition has no further effect.
   */
  repeatable: boolean;
}

/** Redirects that keep the method and body. 303 asks for a GET, which no call here wants. */
const FOLLOWED_REDIRECTS = new Set([301, 302, 307, 308]);
const MAX_REDIRECTS = 5;

const USER_AGENT = "pulumi-dmarc-partner-client";

/** What one logical call carries from attempt to attempt. */
interface CallState {
  spec: CallSpec<z.ZodType>;
  context: CallContext;
  /** When the first attempt started, for the elapsed bound. */
  clock: { firstStartedAt: number | undefined };
  renewedAfterRefusal: boolean;
}

// Effort counts the attempts that faults caused; a renewal after a refused token is not one.
function effortOf(state: CallState, attempts: number): Effort {
  const { firstStartedAt } = state.clock;
  return { attempts, elapsedMs: firstStartedAt === undefined ? 0 : performance.now() - firstStartedAt };
}

export class Requester {
  constructor(
    private readonly options: ResolvedOptions,
    private readonly pacer: Pacer,
    /** Without a token source, requests carry no Authorization header (the token call itself). */
    private readonly tokens?: TokenSource,
  ) {}

  /** Tries per call, the first included, as configured. */
  get maxAttempts(): number {
    return this.options.maxAttempts;
  }

  /** How long a call keeps retrying, as configured. */
  get maxRetryElapsedMs(): number {
    return this.options.maxRetryElapsedMs;
  }

  async call<S extends z.ZodType>(spec: CallSpec<S> & { schema: S }): Promise<z.output<S>>;
  async call(spec: CallSpec<z.ZodType> & { schema?: undefined }): Promise<void>;
  async call<S extends z.ZodType>(spec: CallSpec<S>): Promise<z.output<S> | undefined> {
    const state: CallState = {
      spec,
      context: { operation: spec.operation, method: spec.method, path: this.options.basePath + spec.path },
      clock: { firstStartedAt: undefined },
      renewedAfterRefusal: false,
    };
    // Bounded: every pass sends once, and each branch that loops checks the attempt bounds
    // (the one renewal after a refused token is the only extra pass).
    for (let attempt = 1; ; attempt++) {
      const faultAttempts = state.renewedAfterRefusal ? attempt - 1 : attempt;
      const token = this.tokens === undefined ? undefined : await this.tokens.current();
      const response = await this.attempt(state, token, attempt, faultAttempts);
      if (response === undefined) continue;
      if (response.status >= 200 && response.status < 300) {
        return spec.schema === undefined ? undefined : decodeBody(state.context, response, spec.schema);
      }
      if (this.renewsRefusedToken(state, response, token)) continue;
      await this.waitOrThrow(state, response, faultAttempts);
    }
  }

  /**
   * Sends once. A transport fault that may be retried is waited out and
   * yields no answer; any other fault is thrown as the call's error.
   */
  private async attempt(
    state: CallState,
    token: string | undefined,
    attempt: number,
    faultAttempts: number,
  ): Promise<WireResponse | undefined> {
    try {
      return await this.exchange(state.context, state.spec, token, attempt, state.clock);
    } catch (error) {
      await this.waitOutFault(state, error, faultAttempts);
      return undefined;
    }
  }

  /** A fault the bounds allow retrying is waited out; a too-large answer, a lost answer or an exhausted budget is thrown. */
  private async waitOutFault(state: CallState, error: unknown, faultAttempts: number): Promise<void> {
    const { context } = state;
    if (error instanceof ResponseTooLarge) {
      throw new DmarcResponseError(
        context,
        error.status,
        error.message,
        "check that baseUrl points at the service's API; the client refuses answers this large.",
      );
    }
    if (!(error instanceof TransportFault)) throw error;
    if (error.sent && !state.spec.repeatable) throw new OutcomeUnknownError(context, error.message, error);
    const { spent, delay } = this.retryWait(state, faultAttempts, { kind: "fault" });
    if (error.permanent || delay === undefined) {
      throw new DmarcTransportError(
        { ...context, origin: this.options.origin },
        spent,
        error.message,
        error,
        error.advice,
      );
    }
    this.log(`retrying ${context.method} ${context.path} in ${delay}ms after: ${error.message}`);
    await sleep(delay);
  }

  /** The wait the reason asks for, and what remains of it within the attempt and elapsed bounds (undefined: none). */
  private retryWait(
    state: CallState,
    faultAttempts: number,
    reason: WaitReason,
  ): { spent: Effort; wanted: number; delay: number | undefined } {
    const spent = effortOf(state, faultAttempts);
    const wanted = retryDelayMs(faultAttempts, this.options, reason);
    return { spent, wanted, delay: boundedDelayMs(faultAttempts, spent.elapsedMs, wanted, reason, this.options) };
  }

  /** A 401 on a token the source agrees is refused renews it, once per call. */
  private renewsRefusedToken(state: CallState, response: WireResponse, token: string | undefined): boolean {
    if (response.status !== 401 || token === undefined || state.renewedAfterRefusal) return false;
    if (!this.tokens?.refused(token)) return false;
    state.renewedAfterRefusal = true;
    this.log(`${state.context.method} ${state.context.path}: token refused, renewing it and trying once more`);
    return true;
  }

  /** A retryable status within the bounds is waited out; any other answer is thrown as the service's error. */
  private async waitOrThrow(state: CallState, response: WireResponse, faultAttempts: number): Promise<void> {
    const { context } = state;
    const said = decodeServiceError(response);
    if (response.status === 429) this.pacer.refused();
    if (isRetryableStatus(response.status, state.spec.repeatable)) {
      const reason = waitReasonOf(response.status, requestedDelayMs(response.headers, said.details?.retryAfterSeconds));
      const { spent, wanted, delay } = this.retryWait(state, faultAttempts, reason);
      if (response.status === 429) this.sayRateLimited(context, reason, spent, wanted, delay);
      if (delay !== undefined) {
        this.log(`retrying ${context.method} ${context.path} in ${delay}ms after status ${response.status}`);
        await sleep(delay);
        return;
      }
    }
    throw new DmarcApiError({
      context,
      effort: effortOf(state, faultAttempts),
      status: response.status,
      code: said.code,
      serviceMessage: said.message,
      ...(said.details === undefined ? {} : { details: said.details }),
      ...(said.traceId === undefined ? {} : { traceId: said.traceId }),
      emptyBody: said.emptyBody,
    });
  }

  /** One attempt: a request, and the same-origin redirects it leads to. */
  private async exchange(
    context: CallContext,
    spec: CallSpec<z.ZodType>,
    token: string | undefined,
    attempt: number,
    clock: { firstStartedAt: number | undefined },
  ): Promise<WireResponse> {
    const request: WireRequest = {
      origin: this.options.origin,
      method: spec.method,
      path: context.path,
      headers: this.headers(spec, token),
      ...(spec.json !== undefined ? { body: JSON.stringify(spec.json) } : {}),
      ...(spec.form !== undefined ? { body: new URLSearchParams(spec.form).toString() } : {}),
    };
    for (let hop = 0; ; hop++) {
      const release = await this.pacer.acquire();
      clock.firstStartedAt ??= performance.now();
      const startedAt = performance.now();
      const took = () => `${Math.round(performance.now() - startedAt)}ms`;
      let response: WireResponse;
      try {
        response = await send(request, this.options);
      } catch (error) {
        const outcome = error instanceof Error ? error.message : String(error);
        this.log(`${request.method} ${request.path} -> ${outcome} attempt ${attempt} ${took()}`);
        throw error;
      } finally {
        release();
      }
      this.log(`${request.method} ${request.path} -> ${response.status} attempt ${attempt} ${took()}`);
      if (!FOLLOWED_REDIRECTS.has(response.status)) return response;
      if (hop === MAX_REDIRECTS) {
        throw new DmarcResponseError(
          context,
          response.status,
          `redirect after redirect (${MAX_REDIRECTS} followed)`,
          "check that baseUrl is the service's address and not one that redirects in a loop.",
        );
      }
      request.path = this.redirectTarget(context, response, request.path);
    }
  }

  // Only same-origin redirects are followed: the token, the client secret and
  // the request body never travel to a host the configuration did not name.
  private redirectTarget(context: CallContext, response: WireResponse, fromPath: string): string {
    const location = response.headers.location;
    const value = Array.isArray(location) ? location[0] : location;
    if (value === undefined || value === "") {
      throw new DmarcResponseError(
        context,
        response.status,
        "a redirect without a Location",
        "report it to the service.",
      );
    }
    const target = new URL(value, this.options.origin + fromPath);
    if (target.origin !== this.options.origin) {
      throw new DmarcResponseError(
        context,
        response.status,
        `a redirect to another address (${target.origin}), which the client does not follow so that credentials stay with ${this.options.origin}`,
        `if ${target.origin} is the service's real address, set baseUrl to it.`,
      );
    }
    return target.pathname + target.search;
  }

  private headers(spec: CallSpec<z.ZodType>, token: string | undefined): Record<string, string> {
    return {
      accept: "application/json",
      "user-agent": USER_AGENT,
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(spec.json !== undefined ? { "content-type": "application/json" } : {}),
      ...(spec.form !== undefined ? { "content-type": "application/x-www-form-urlencoded" } : {}),
    };
  }

  private log(line: string): void {
    this.options.log?.(redact(line));
  }

  /** Every wait on the rate limit is announced: how long, why, and how much of the bounds it leaves. */
  private sayRateLimited(
    context: CallContext,
    reason: WaitReason,
    spent: Effort,
    wanted: number,
    delay: number | undefined,
  ): void {
    const { maxAttempts, maxRetryElapsedMs } = this.options;
    const asked =
      reason.kind === "requested"
        ? `asking to wait ${seconds(reason.ms)}`
        : `with no Retry-After or retryAfterSeconds, so the client waits out the limit's window`;
    const bounds = `attempt ${spent.attempts} of at most ${maxAttempts}, ${seconds(spent.elapsedMs)} of maxRetryElapsedMs ${seconds(maxRetryElapsedMs)} spent`;
    const outcome =
      delay === undefined
        ? `not waiting ${seconds(wanted)}: that is beyond the bounds (${bounds})`
        : `waiting ${seconds(delay)} (${bounds})`;
    this.options.notice(
      redact(noticeLine(`rate limited: ${context.method} ${context.path} answered 429 ${asked}; ${outcome}`)),
    );
  }
}
