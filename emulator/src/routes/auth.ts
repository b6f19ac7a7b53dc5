import { MagicLink, MagicLinkRequest, TokenRequest, TokenResponse } from "pulumi-dmarc-partner/api";
import type { z } from "zod";
import { memberOf, organizationInScope } from "../access";
import { type Context, now, param } from "../context";
import { ApiError, invalid, notFound, unauthenticated } from "../errors";
import { newSecretToken } from "../ids";
import type { ApiRouter, PartnerCall } from "../router";
import type { MagicLinkRecord } from "../store";
import { conform, parseInput } from "../wire";

function createMagicLink(ctx: Context, { request, partner }: PartnerCall): z.input<typeof MagicLink> {
  const { store } = ctx;
  const body = parseInput(MagicLinkRequest, request.body, "body");
  organizationInScope(store, ctx.profile, partner, body.organizationId);
  const user = memberOf(store, partner, body.organizationId, body.userId);
  const record: MagicLinkRecord = {
    token: newSecretToken("ml"),
    partnerId: partner.id,
    organizationId: body.organizationId,
    userId: user.id,
    // Without one, the link lands on the emulator's stand-in for the service's console.
    redirectUri: body.redirectUri ?? `${ctx.baseUrl()}/auth/signed-in`,
    expiresAt: new Date(Date.now() + ctx.magicLinkTtlSeconds * 1000).toISOString(),
    consumedAt: null,
  };
  store.magicLinks.set(record.token, record);
  return conform(MagicLink, { url: `${ctx.baseUrl()}/auth/magic/${record.token}`, expiringAt: record.expiresAt });
}

export function authRoutes(router: ApiRouter, ctx: Context): void {
  const { store, partners, tokens } = ctx;

  router.open("POST", "/auth/token", "form", ({ request }) => {
    const body = parseInput(TokenRequest, request.body, "body");
    const partner = partners.withClientId(body.client_id);
    if (!partner || partner.clientSecret !== body.client_secret) {
      if (ctx.profile.badCredentialsStatus === 400) {
        throw invalid(
          [{ field: "client_id", message: "unknown client or wrong secret" }],
          "Invalid client credentials.",
        );
      }
      throw unauthenticated("The client credentials are not valid.");
    }
    return conform(TokenResponse, tokens.issue(partner));
  });

  router.authenticated("POST", "/auth/magic-link", (call) => createMagicLink(ctx, call));

  // Where a link made without redirectUri lands.
  router.open("GET", "/auth/signed-in", "json", () => ({ signedIn: true }));

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
