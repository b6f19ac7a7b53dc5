import { randomUUID } from "node:crypto";
import {
  InviteUserRequest,
  InviteUserResponse,
  RevokeOrganizationAccessRequest,
  RevokeOrganizationAccessResponse,
  User,
  UserQuery,
} from "pulumi-dmarc-partner/api";
import type { z } from "zod";
import { findUser, memberOf, organizationInScope } from "../access";
import { audit } from "../auditLog";
import { type Context, now, param } from "../context";
import type { WireProfile } from "../profiles";
import type { ApiRouter, PartnerCall } from "../router";
import type { Store, UserRecord } from "../store";
import { conform, parseInput } from "../wire";

/** Users exist only as invited e-mail addresses here: no names until someone signs in to a real console. */
function view(record: UserRecord): User {
  return conform(User, {
    id: record.id,
    username: null,
    firstName: null,
    lastName: null,
    email: record.email,
    emailVerified: record.emailVerified,
  });
}

/** Invites each address as the given role, making users of those not known yet. */
function invite(
  store: Store,
  profile: WireProfile,
  { request, partner }: PartnerCall,
): z.input<typeof InviteUserResponse> {
  const body = parseInput(InviteUserRequest, request.body, "body");
  organizationInScope(store, profile, partner, body.organizationId);
  const role = body.permissions.organization.role;
  const users = body.permissions.users.map(({ email }) => {
    const existing = findUser(store, partner, email);
    const user: UserRecord = existing ?? {
      id: randomUUID(),
      partnerId: partner.id,
      email: email.toLowerCase(),
      emailVerified: false,
      memberships: {},
      createdAt: now(),
    };
    user.memberships[body.organizationId] = role;
    store.users.set(user.id, user);
    const filed = role === "admin" ? "USER_INVITED_AS_ADMIN" : "USER_INVITED_AS_VIEWER";
    audit(store, { partnerId: partner.id, organizationId: body.organizationId }, filed, {
      label: user.email,
      id: user.id,
    });
    return user;
  });
  return conform(InviteUserResponse, { users: users.map(view) });
}

export function userRoutes(router: ApiRouter, { store, profile }: Context): void {
  router.resource("POST", "/users/invite", (call) => invite(store, profile, call));

  router.resource("GET", "/users/:userId", ({ request, partner }) => {
    const query = parseInput(UserQuery, request.query, "query");
    organizationInScope(store, profile, partner, query.organizationId);
    const user = memberOf(store, partner, query.organizationId, param(request, "userId"));
    return view(user);
  });

  // Idempotent, so a client may repeat a revoke whose answer it never saw: users without access are skipped.
  const revoke = ({ request, partner }: PartnerCall) => {
    const body = parseInput(RevokeOrganizationAccessRequest, request.body, "body");
    organizationInScope(store, profile, partner, body.organizationId);
    const revoked: string[] = [];
    for (const userId of body.userIds) {
      const user = findUser(store, partner, userId);
      if (user?.memberships[body.organizationId] === undefined) continue;
      store.removeUserMembership(user, body.organizationId);
      audit(store, { partnerId: partner.id, organizationId: body.organizationId }, "USER_REVOKED_FROM_ORGANIZATION", {
        label: user.email,
        id: user.id,
      });
      revoked.push(user.id);
    }
    return conform(RevokeOrganizationAccessResponse, { organizationId: body.organizationId, userIds: revoked });
  };
  router.resource("POST", "/users/revoke-organization-access", revoke);
  // The reference shows one more path segment of undocumented meaning (facts page, section 5 [choice]).
  router.resource("POST", "/users/revoke-organization-access/:segment", revoke);
}
