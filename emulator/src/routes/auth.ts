import { MagicLink, MagicLinkRequest, TokenRequest, TokenResponse } from "pulumi-dmarc-partner/api";
import { memberOf, organizationOf } from "../access";
import { type Context, now, param } from "../context";
import { ApiError, notFound, unauthenticated } from "../errors";
import { newSecretToken } from "../ids";
import type { ApiRouter } from "../router";
import type { MagicLinkRecord } from "../store";
import { conform, parseInput } from "../wire";

export function authRoutes(router: ApiRouter, ctx: Context): void {
  const { store, partners, tokens } = ctx;

  router.open("POST", "/auth/token", "form", ({ request }) => {
    const body = parseInput(TokenRequest, request.body, "body");
    const partner = partners.withClientId(body.client_id);
    if (!partner || partner.clientSecret !== body.client_secret) {
      throw unauthenticated("The client credentials are not valid.");
    }
    return conform(TokenResponse, tokens.issue(partner));
  });

  router.authenticated("POST", "/auth/magic-link", ({ request, partner }) => {
    const body = parseInput(MagicLinkRequest, request.body, "body");
    organizationOf(store, partner, body.organizationId);
    const user = memberOf(store, partner, body.organizationId, body.userId);
    const record: MagicLinkRecord = {
      token: newSecretToken("ml"),
      partnerId: partner.id,
      organizationId: body.organizationId,
      userId: user.id,
      redirectUri: body.redirectUri,
      expiresAt: new Date(Date.now() + ctx.magicLinkTtlSeconds * 1000).toISOString(),
      consumedAt: null,
    };
    store.magicLinks.set(record.token, record);
    return conform(MagicLink, { url: `${ctx.baseUrl()}/auth/magic/${record.token}`, expiringAt: record.expiresAt });
  });

  // What the user's browser opens: single use, and only until it expires.
  router.open("GET", "/auth/magic/:token", "json", ({ request, reply }) => {
    const record = store.magicLinks.get(param(request, "token"));
    if (!record) throw notFound("MagicLink", "(redacted)");
    if (record.consumedAt !== null || Date.parse(record.expiresAt) <= Date.now()) {
      throw new ApiError(410, "ResourceNotFound", "This sign-in link was already used or has expired.", {
        resourceType: "MagicLink",
        resourceId: "(redacted)",
      });
    }
    record.consumedAt = now();
    const user = store.users.get(record.userId);
    if (user) user.emailVerified = true;
    store.changed();
    return reply.redirect(record.redirectUri, 302);
  });
}
