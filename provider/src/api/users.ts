import { z } from "zod";
import { Timestamp } from "./common";
import { Email } from "./validation";

export const Role = z.enum(["admin", "no_access"]);
export type Role = z.infer<typeof Role>;

export const InviteUserRequest = z.object({
  organizationId: z.string().min(1),
  permissions: z.object({
    users: z.array(z.object({ email: Email })).min(1),
    organization: z.object({ role: Role }),
  }),
  redirectUrl: z.url().optional(),
});
export type InviteUserRequest = z.infer<typeof InviteUserRequest>;

export const User = z.object({
  id: z.string().min(1),
  username: z.string().nullable().optional(),
  firstName: z.string().nullable().optional(),
  lastName: z.string().nullable().optional(),
  email: z.string(),
  emailVerified: z.boolean(),
});
export type User = z.infer<typeof User>;

/** Answer of the invite call as the emulator sends it; the service's own body is not published. */
export const InviteUserResponse = z.object({ users: z.array(User) });
export type InviteUserResponse = z.infer<typeof InviteUserResponse>;

export const UserQuery = z.object({ organizationId: z.string().min(1) });

export const RevokeOrganizationAccessRequest = z.object({
  organizationId: z.string().min(1),
  userIds: z.array(z.string().min(1)).min(1),
});
export type RevokeOrganizationAccessRequest = z.infer<typeof RevokeOrganizationAccessRequest>;

/** Answer of the revoke call as the emulator sends it; the service's own body is not published. */
export const RevokeOrganizationAccessResponse = z.object({
  organizationId: z.string(),
  userIds: z.array(z.string()),
});
export type RevokeOrganizationAccessResponse = z.infer<typeof RevokeOrganizationAccessResponse>;

export const MagicLinkRequest = z.object({
  userId: z.string().min(1),
  organizationId: z.string().min(1),
  redirectUri: z.url().optional(),
});
export type MagicLinkRequest = z.infer<typeof MagicLinkRequest>;

/** The description names the link `url`, a guide `link`: either is read as `url`. */
export const MagicLink = z
  .object({ url: z.url().optional(), link: z.url().optional(), expiringAt: Timestamp })
  .transform(({ url, link, expiringAt }, context) => {
    const address = url ?? link;
    if (address !== undefined) return { url: address, expiringAt };
    context.addIssue({ code: "custom", path: ["url"], message: "the answer carries neither url nor link" });
    return z.NEVER;
  });
export type MagicLink = z.output<typeof MagicLink>;
