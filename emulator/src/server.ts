import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from "fastify";
import type { Logger } from "pino";
import type { Context } from "./context";
import { controlRoutes } from "./control/routes";
import { Bookkeeping } from "./http/bookkeeping";
import { errorHandler, notFoundHandler } from "./http/handlers";
import { authenticationHook, faultHook, mediaTypeCheck, processingHook, useBodyParsers } from "./http/hooks";
import { newId } from "./ids";
import type { EmulatorTls } from "./options";
import type { RequestLog } from "./requestLog";
import { ApiRouter } from "./router";
import { auditLogRoutes } from "./routes/auditLog";
import { authRoutes } from "./routes/auth";
import { domainGroupRoutes } from "./routes/domainGroups";
import { domainRoutes } from "./routes/domains";
import { organizationRoutes } from "./routes/organizations";
import { reportRoutes } from "./routes/reports";
import { subscriptionRoutes } from "./routes/subscriptions";
import { userRoutes } from "./routes/users";
import { webhookRoutes } from "./routes/webhooks";

export interface ServerOptions {
  ctx: Context;
  log: Logger;
  requestLog: RequestLog | undefined;
  /** Aborted on close, so injected latency does not hold shutdown up. */
  shutdown: AbortSignal;
  /** Certificate and key to serve https with; undefined: plain http. */
  tls: EmulatorTls | undefined;
}

function fastifyApp(log: Logger, tls: EmulatorTls | undefined): FastifyInstance {
  // Widened to Fastify's logger type so the app has the plain FastifyInstance type the routes take.
  const loggerInstance: FastifyBaseLogger = log;
  // Fastify types an https server apart; the routes only need the instance's common face.
  return Fastify({
    ...(tls ? { https: tls } : {}),
    loggerInstance,
    // The request log replaces Fastify's own per-request log lines.
    logController: new LogController({ disableRequestLogging: true }),
    forceCloseConnections: true,
    exposeHeadRoutes: false,
    routerOptions: { ignoreTrailingSlash: true },
    genReqId: () => newId("trace"),
  });
}

function routes(app: FastifyInstance, ctx: Context): void {
  const router = new ApiRouter(app);
  authRoutes(router, ctx);
  organizationRoutes(router, ctx);
  domainGroupRoutes(router, ctx);
  domainRoutes(router, ctx);
  webhookRoutes(router, ctx);
  subscriptionRoutes(router, ctx);
  userRoutes(router, ctx);
  auditLogRoutes(router, ctx);
  reportRoutes(router, ctx);
  controlRoutes(app, ctx, { apiRoutes: router.patterns });
}

/** The HTTP server: body parsing, the error envelope, faults, authentication, stats and the request log. */
export function buildServer({ ctx, log, requestLog, shutdown, tls }: ServerOptions): FastifyInstance {
  const app = fastifyApp(log, tls);
  const bookkeeping = new Bookkeeping(ctx, requestLog);
  useBodyParsers(app);
  app.addHook("onRequest", faultHook(ctx, bookkeeping, shutdown));
  app.addHook("onRequest", authenticationHook(ctx));
  app.addHook("preValidation", mediaTypeCheck);
  app.addHook("preHandler", processingHook(bookkeeping, shutdown));
  app.addHook("onSend", bookkeeping.onSend);
  app.setErrorHandler(errorHandler(ctx));
  app.setNotFoundHandler(notFoundHandler(ctx));
  routes(app, ctx);
  return app;
}
