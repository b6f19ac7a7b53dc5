import {
  type InviteUserRequest,
  MagicLink,
  type MagicLinkRequest,
  type RevokeOrganizationAccessRequest,
  User,
} from "../../api";
import { rememberSecret } from "../redaction";
import type { Requester } from "../requester";
import { segment, withQuery } from "./common";
import type { OrganizationCalls } from "./organizations";

// Users and their sign-in: a magic link signs a user in, so it goes with the
// users, as its schemas do in ../../api/users.ts, though its route is under /auth.

export class UserCalls {
  constructor(
    private readonly requester: Requester,
    private readonly organizations: OrganizationCalls,
  ) {}

  inviteUser(body: InviteUserRequest): Promise<void> {
    return this.requester.call({
      operation: "invite user",
      method: "POST",
      path: "/v1/users/invite",
      json: body,
      // Each invitation sends an e-mail.
      repeatable: false,
    });
  }

  getUser(organizationId: string, userId: string): Promise<User | undefined> {
    return this.organizations.scopedRead(
      organizationId,
      this.requester.call({
        operation: "read user",
        method: "GET",
        path: withQuery(`/v1/users/${segment(userId)}`, { organizationId }),
        schema: User,
        repeatable: true,
      }),
    );
  }

  revokeOrganizationAccess(body: RevokeOrganizationAccessRequest): Promise<void> {
    return this.requester.call({
      operation: "revoke organization access",
      method: "POST",
      path: "/v1/users/revoke-organization-access",
      json: body,
      // Revoking access that is already revoked changes nothing.
      repeatable: true,
    });
  }

  async createMagicLink(body: MagicLinkRequest): Promise<MagicLink> {
    const link = await this.requester.call({
      operation: "create magic link",
      method: "POST",
      path: "/auth/magic-link",
      json: body,
      schema: MagicLink,
      repeatable: false,
    });
    rememberSecret(link.url);
    return link;
  }
}
