import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { Email, Role, type User } from "../api";
import type { DmarcClient } from "../client";
import { createOrAdopt, finishCreate, joinId, splitId } from "../runtime/adopt";
import type { ResourceDefinition } from "../runtime/lifecycle";
import { type AdoptableArgs, DmarcResource } from "../runtime/resource";

export const InvitationInputs = z.object({
  organizationId: z.string().min(1, { message: "must be an organisation id" }),
  email: Email,
  role: Role.default("admin"),
  /** Where the invitation e-mail's link lands. */
  redirectUrl: z.url({ message: "must be a URL such as https://app.example.com/welcome" }).optional(),
});
export type InvitationInputs = z.infer<typeof InvitationInputs>;

export interface InvitationOutputs extends InvitationInputs {
  userId: string;
  emailVerified: boolean;
}

function outputsFor(inputs: InvitationInputs, user: User): InvitationOutputs {
  return { ...inputs, userId: user.id, emailVerified: user.emailVerified };
}

async function findUser(client: DmarcClient, organizationId: string, email: string): Promise<User | undefined> {
  // The invited user's e-mail address is accepted as the user id (spec, section 2).
  return client.getUser(organizationId, email);
}

/** The outputs of an invitation the service accepted, read back from its user. */
async function invitedUser(client: DmarcClient, inputs: InvitationInputs): Promise<InvitationOutputs> {
  const user = await findUser(client, inputs.organizationId, inputs.email);
  if (!user) {
    throw new Error(
      `Invitation of ${inputs.email} to organisation ${inputs.organizationId} was accepted, but the user cannot be read back`,
    );
  }
  return outputsFor(inputs, user);
}

export const invitation: ResourceDefinition<InvitationInputs, InvitationOutputs> = {
  typeName: "Invitation",
  inputs: InvitationInputs,
  replaceOn: ["organizationId", "email", "role"],

  async create({ client }, inputs) {
    await createOrAdopt(
      client,
      async () => {
        await client.inviteUser({
          organizationId: inputs.organizationId,
          permissions: { users: [{ email: inputs.email }], organization: { role: inputs.role } },
          ...(inputs.redirectUrl ? { redirectUrl: inputs.redirectUrl } : {}),
        });
        return true;
      },
      async () => ((await findUser(client, inputs.organizationId, inputs.email)) ? true : undefined),
    );
    const id = joinId(inputs.organizationId, inputs.email);
    return { id, outs: await finishCreate(id, inputs, () => invitedUser(client, inputs)) };
  },

  async read({ client }, id, props) {
    const { organizationId, child: email } = splitId(id, "Invitation", "email");
    const user = await findUser(client, organizationId, email);
    if (!user) return undefined;
    const inputs: InvitationInputs = {
      organizationId,
      email,
      role: props?.role ?? "admin",
      ...(props?.redirectUrl ? { redirectUrl: props.redirectUrl } : {}),
    };
    return { outs: outputsFor(inputs, user) };
  },

  async update({ client }, _id, olds, news) {
    // Recorded before its user could be read back (see finishCreate): read it now.
    if (olds.userId === undefined) return invitedUser(client, news);
    // Only redirectUrl can change without a replacement, and it matters only when inviting.
    return { ...olds, ...news };
  },

  async delete({ client }, _id, props) {
    const user = await findUser(client, props.organizationId, props.email);
    if (user) await client.revokeOrganizationAccess({ organizationId: props.organizationId, userIds: [user.id] });
  },
};

export interface InvitationArgs extends AdoptableArgs {
  /** Organisation the user is invited to. A change replaces the invitation. */
  organizationId: pulumi.Input<string>;
  /** The user's e-mail address; also their user id. A change replaces the invitation. */
  email: pulumi.Input<string>;
  /** `admin` (default) or `no_access`. A change replaces the invitation. */
  role?: pulumi.Input<"admin" | "no_access">;
  /** Where the invitation e-mail's link lands. */
  redirectUrl?: pulumi.Input<string>;
}

/** A user invited to an organisation. Deleting it revokes the user's access. Resource id: `<organizationId>/<email>`. */
export class Invitation extends DmarcResource {
  declare readonly organizationId: pulumi.Output<string>;
  declare readonly email: pulumi.Output<string>;
  declare readonly role: pulumi.Output<"admin" | "no_access">;
  declare readonly redirectUrl: pulumi.Output<string | undefined>;
  declare readonly userId: pulumi.Output<string>;
  declare readonly emailVerified: pulumi.Output<boolean>;

  constructor(name: string, args: InvitationArgs, opts?: pulumi.CustomResourceOptions) {
    super("Invitation", name, { ...args, userId: undefined, emailVerified: undefined }, opts);
  }
}
