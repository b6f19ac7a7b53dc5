import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from "fastify";
import { unauthenticated } from "./errors";
import type { Partner } from "./partners";

/** What every API route carries in its Fastify config; the control plane's routes carry none of it. */
export interface ApiRouteConfig {
  /** "METHOD /v1/..." under which stats count the route and faults match it. */
  pattern: string;
  authenticated: boolean;
  /** The body's media type; the token endpoint alone is form encoded. */
  body: "json" | "form";
}

export interface Call {
  request: FastifyRequest;
  reply: FastifyReply;
}

export interface PartnerCall extends Call {
  partner: Partner;
}

/** Resource routes answer under /v1 and also under the spec's /v1.0 spelling and the unprefixed reference paths. */
const RESOURCE_PREFIXES = ["/v1", "/v1.0", ""];

const partners = new WeakMap<FastifyRequest, Partner>();

export function setPartner(request: FastifyRequest, partner: Partner): void {
  partners.set(request, partner);
}

export function partnerOf(request: FastifyRequest): Partner | undefined {
  return partners.get(request);
}

function requirePartner(request: FastifyRequest): Partner {
  const partner = partners.get(request);
  if (!partner) throw unauthenticated("The Authorization header must carry a bearer token.");
  return partner;
}

export function apiConfig(request: FastifyRequest): ApiRouteConfig | undefined {
  const config = request.routeOptions.config as Partial<ApiRouteConfig> | undefined;
  return config?.pattern ? (config as ApiRouteConfig) : undefined;
}

/**
 * Registers the API's routes. A handler returns the answer body (undefined for
 * none) after setting the status on the reply, or sends the reply itself.
 */
export class ApiRouter {
  readonly patterns = new Set<string>();

  constructor(private readonly app: FastifyInstance) {}

  /** A versioned resource route, e.g. `resource("POST", "/organizations", ...)` for POST /v1/organizations. */
  resource(method: HTTPMethods, path: string, handler: (call: PartnerCall) => unknown): void {
    const pattern = `${method} /v1${path}`;
    for (const prefix of RESOURCE_PREFIXES) {
      this.add(method, `${prefix}${path}`, { pattern, authenticated: true, body: "json" }, (call) =>
        handler({ ...call, partner: requirePartner(call.request) }),
      );
    }
  }

  /** An unversioned /auth route that needs a partner's bearer token. */
  authenticated(method: HTTPMethods, path: string, handler: (call: PartnerCall) => unknown): void {
    this.add(method, path, { pattern: `${method} ${path}`, authenticated: true, body: "json" }, (call) =>
      handler({ ...call, partner: requirePartner(call.request) }),
    );
  }

  /** An unversioned /auth route open to anyone: the token endpoint and magic-link consumption. */
  open(method: HTTPMethods, path: string, body: "json" | "form", handler: (call: Call) => unknown): void {
    this.add(method, path, { pattern: `${method} ${path}`, authenticated: false, body }, handler);
  }

  private add(method: HTTPMethods, url: string, config: ApiRouteConfig, handler: (call: Call) => unknown): void {
    this.patterns.add(config.pattern);
    this.app.route({
      method,
      url,
      config,
      handler: async (request, reply) => {
        const body = await handler({ request, reply });
        return reply.sent ? reply : reply.send(body);
      },
    });
  }
}
