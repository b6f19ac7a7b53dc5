import { setTimeout as sleep } from "node:timers/promises";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Context } from "../context";
import { ApiError, internal, invalid } from "../errors";
import { apiConfig, setPartner } from "../router";
import type { Bookkeeping } from "./bookkeeping";
import { CONTROL_PREFIX, MEDIA_TYPES, mediaType } from "./paths";

type OnRequest = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | undefined>;

function parseJson(body: string): unknown {
  if (body.trim() === "") return undefined;
  try {
    return JSON.parse(body);
  } catch (error) {
    throw invalid([{ field: "body", message: `is not valid JSON: ${(error as Error).message}` }], "Malformed JSON.");
  }
}

function parseForm(body: string): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(body));
}

/** Only the two media types the API speaks are parsed; any other is refused with 415. */
export function useBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(MEDIA_TYPES.json, { parseAs: "string" }, (_request, body, done) => {
    try {
      done(null, parseJson(String(body)));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  app.addContentTypeParser(MEDIA_TYPES.form, { parseAs: "string" }, (_request, body, done) => {
    done(null, parseForm(String(body)));
  });
}

/**
 * Injected latency, drops, rate limits and outages. It runs first: a rate
 * limit or an outage answers before authentication, as a gateway would.
 */
export function faultHook(ctx: Context, bookkeeping: Bookkeeping, shutdown: AbortSignal): OnRequest {
  return async (request, reply) => {
    if (request.url.startsWith(CONTROL_PREFIX)) return;
    const pattern = apiConfig(request)?.pattern;
    bookkeeping.begin(request, pattern);
    if (!pattern) return;
    const decision = ctx.faults.decide(pattern);
    bookkeeping.decided(request, decision);
    if (decision.latencyMs > 0) await sleep(decision.latencyMs, undefined, { signal: shutdown });
    const outcome = decision.outcome;
    if (outcome?.kind === "drop") return bookkeeping.dropBeforeProcessing(request, reply);
    if (outcome?.kind === "rateLimit") {
      bookkeeping.rateLimited();
      const { message, details, headers } = outcome.answer;
      throw new ApiError(429, "RateLimitExceeded", message, details, headers);
    }
    if (outcome?.kind === "error") throw internal("Injected fault: the service is failing.", outcome.status);
  };
}

/**
 * Injected processing time: after the request is received (its body read),
 * before it is carried out, so it is carried out even when its caller has
 * gone meanwhile, as a slow service does.
 */
export function processingHook(
  bookkeeping: Bookkeeping,
  shutdown: AbortSignal,
): (request: FastifyRequest) => Promise<void> {
  return async (request) => {
    const processingMs = bookkeeping.processingMs(request);
    if (processingMs > 0) await sleep(processingMs, undefined, { signal: shutdown });
  };
}

/** Routes that need a partner get the one the bearer token names, or a 401. */
export function authenticationHook(ctx: Context): (request: FastifyRequest) => Promise<void> {
  return async (request) => {
    const config = apiConfig(request);
    if (config?.authenticated) setPartner(request, ctx.tokens.authenticate(request.headers.authorization));
  };
}

/** A body must come in the media type its route takes. */
export async function mediaTypeCheck(request: FastifyRequest): Promise<void> {
  if (request.body === undefined) return;
  const expected = MEDIA_TYPES[apiConfig(request)?.body ?? "json"];
  if (mediaType(request) !== expected) {
    throw invalid([{ field: "content-type", message: `must be ${expected}` }], "Unsupported content type.", 415);
  }
}
