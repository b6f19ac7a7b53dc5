import { setTimeout as sleep } from "node:timers/promises";
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyRequest,
  LogController,
} from "fastify";
import type { Logger } from "pino";
import type { Context } from "./context";
import { controlRoutes } from "./control/routes";
import { ApiError, internal, invalid } from "./errors";
import { newId } from "./ids";
import type { RequestLog } from "./requestLog";
import { ApiRouter, apiConfig, partnerOf, setPartner } from "./router";
import { authRoutes } from "./routes/auth";
import { domainGroupRoutes } from "./routes/domainGroups";
import { domainRoutes } from "./routes/domains";
import { organizationRoutes } from "./routes/organizations";
import { subscriptionRoutes } from "./routes/subscriptions";
import { userRoutes } from "./routes/users";
import { webhookRoutes } from "./routes/webhooks";

const CONTROL_PREFIX = "/_emulator/";
const MEDIA_TYPES = { json: "application/json", form: "application/x-www-form-urlencoded" } as const;

export interface ServerOptions {
  ctx: Context;
  log: Logger;
  requestLog: RequestLog | undefined;
  /** Aborted on close, so injected latency does not hold shutdown up. */
  shutdown: AbortSignal;
}

/** Per-request bookkeeping of an API request (control-plane requests have none). */
interface Exchange {
  startedAt: number;
  dropAfterProcessing: boolean;
}

function mediaType(request: FastifyRequest): string {
  return (request.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

function pathOf(request: FastifyRequest): string {
  return request.url.split("?")[0] ?? request.url;
}

function asApiError(error: FastifyError): ApiError {
  if (error instanceof ApiError) return error;
  if (error.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") {
    return invalid(
      [{ field: "content-type", message: `must be ${MEDIA_TYPES.json} (${MEDIA_TYPES.form} for /auth/token)` }],
      "Unsupported content type.",
      415,
    );
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) return invalid([{ field: "body", message: error.message }], error.message, status);
  return internal("The emulator failed unexpectedly; see its log.");
}

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

function answerOf(payload: unknown): unknown {
  if (typeof payload !== "string" || payload === "") return null;
  try {
    return JSON.parse(payload);
  } catch {
    return payload;
  }
}

/** The HTTP server: body parsing, the error envelope, faults, authentication, stats and the request log. */
export function buildServer({ ctx, log, requestLog, shutdown }: ServerOptions): FastifyInstance {
  // Widened to Fastify's logger type so the app has the plain FastifyInstance type the routes take.
  const loggerInstance: FastifyBaseLogger = log;
  const app = Fastify({
    loggerInstance,
    // The request log replaces Fastify's own per-request log lines.
    logController: new LogController({ disableRequestLogging: true }),
    forceCloseConnections: true,
    exposeHeadRoutes: false,
    routerOptions: { ignoreTrailingSlash: true },
    genReqId: () => newId("trace"),
  });
  const exchanges = new WeakMap<FastifyRequest, Exchange>();

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

  const record = (
    request: FastifyRequest,
    status: number | null,
    response: unknown,
    dropped?: "before-processing" | "after-processing",
  ) => {
    const exchange = exchanges.get(request);
    if (!exchange || !requestLog) return;
    requestLog.write({
      time: new Date(exchange.startedAt).toISOString(),
      method: request.method,
      path: pathOf(request),
      query: request.query ?? {},
      body: request.body ?? null,
      status,
      response,
      partnerId: partnerOf(request)?.id ?? null,
      traceId: String(request.id),
      durationMs: Date.now() - exchange.startedAt,
      ...(dropped ? { dropped } : {}),
    });
  };

  // Faults first: a rate limit or an outage answers before authentication, as a gateway would.
  app.addHook("onRequest", async (request, reply) => {
    if (request.url.startsWith(CONTROL_PREFIX)) return;
    const exchange: Exchange = { startedAt: Date.now(), dropAfterProcessing: false };
    exchanges.set(request, exchange);
    const pattern = apiConfig(request)?.pattern;
    ctx.stats.request(pattern);
    if (!pattern) return;
    const decision = ctx.faults.decide(pattern);
    exchange.dropAfterProcessing = decision.dropAfterProcessing;
    if (decision.latencyMs > 0) await sleep(decision.latencyMs, undefined, { signal: shutdown });
    const outcome = decision.outcome;
    if (outcome?.kind === "drop") {
      record(request, null, null, "before-processing");
      ctx.stats.dropped();
      reply.hijack();
      request.raw.socket?.destroy();
      return reply;
    }
    if (outcome?.kind === "rateLimit") {
      ctx.stats.rateLimited();
      const { message, details, headers } = outcome.answer;
      throw new ApiError(429, "RateLimitExceeded", message, details, headers);
    }
    if (outcome?.kind === "error") throw internal("Injected fault: the service is failing.", outcome.status);
  });

  app.addHook("onRequest", async (request) => {
    const config = apiConfig(request);
    if (config?.authenticated) setPartner(request, ctx.tokens.authenticate(request.headers.authorization));
  });

  app.addHook("preValidation", async (request) => {
    if (request.body === undefined) return;
    const expected = MEDIA_TYPES[apiConfig(request)?.body ?? "json"];
    if (mediaType(request) !== expected) {
      throw invalid([{ field: "content-type", message: `must be ${expected}` }], "Unsupported content type.", 415);
    }
  });

  app.addHook("onSend", async (request, reply, payload) => {
    if (request.method !== "GET") ctx.store.changed();
    const exchange = exchanges.get(request);
    if (!exchange) return payload;
    if (exchange.dropAfterProcessing) {
      // The operation happened; the caller never learns it did.
      record(request, reply.statusCode, answerOf(payload), "after-processing");
      ctx.stats.dropped();
      request.raw.socket?.destroy();
    } else {
      record(request, reply.statusCode, answerOf(payload));
      ctx.stats.answered(reply.statusCode);
    }
    return payload;
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const apiError = asApiError(error);
    if (!(error instanceof ApiError) && apiError.status >= 500) request.log.error({ err: error }, "unexpected error");
    return reply
      .code(apiError.status)
      .headers(apiError.headers)
      .send(ctx.profile.errorBody(apiError, String(request.id)));
  });

  app.setNotFoundHandler((request, reply) => {
    const route = `${request.method} ${pathOf(request)}`;
    const error = new ApiError(404, "ResourceNotFound", `No route ${route}.`, {
      resourceType: "Route",
      resourceId: route,
    });
    return reply.code(404).send(ctx.profile.errorBody(error, String(request.id)));
  });

  const router = new ApiRouter(app);
  authRoutes(router, ctx);
  organizationRoutes(router, ctx);
  domainGroupRoutes(router, ctx);
  domainRoutes(router, ctx);
  webhookRoutes(router, ctx);
  subscriptionRoutes(router, ctx);
  userRoutes(router, ctx);
  controlRoutes(app, ctx, { apiRoutes: router.patterns });
  return app;
}
