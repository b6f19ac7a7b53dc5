import { z } from "zod";
import { Role, type User } from "../api";
import type { DmarcClient } from "../client";
import { joinId, splitId } from "../runtime/ids";
import { defineResource, type OutputChange, updateMayChange } from "../runtime/lifecycle";
import { resourceClass } from "../runtime/resource";
import { finishCreate, settleAction } from "../runtime/settle";
import { EmailAddress, OrganizationId, SecureLink } from "./fields";

const InvitationInputs = z.object({
  organizationId: OrganizationId.describe("The organisation the user is invited to."),
  email: EmailAddress.describe("The user's e-mail address, compared in lower case; also their user id."),
  role: Role.describe("The user's role in the organisation.").default("admin"),
  redirectUrl: SecureLink.optional().describe(
    "Where the invitation e-mail's link lands: https (http for loopback hosts only).",
  ),
});
type InvitationInputs = z.output<typeof InvitationInputs>;

const InvitationOutputs = z.object({
  userId: z.string().describe("The service's id of the user."),
  emailVerified: z.boolean().describe("Whether the service reports the user's e-mail address as verified."),
});
type InvitationProps = InvitationInputs & z.output<typeof InvitationOutputs>;

function propsOf(inputs: InvitationInputs, user: User): InvitationProps {
  return { ...inputs, userId: user.id, emailVerified: user.emailVerified };
}

/**
 * The user by the id the service gave it once known (the description reads
 * users by id), else by e-mail address, which the spec accepts as the user id.
 */
async function findUser(
  client: DmarcClient,
  organizationId: string,
  email: string,
  userId?: string,
): Promise<User | undefined> {
  return client.getUser(organizationId, userId ?? email);
}

/** The outputs of an invitation the service accepted, read back from its user. */
async function invitedUser(client: DmarcClient, inputs: InvitationInputs): Promise<InvitationProps> {
  const user = await findUser(client, inputs.organizationId, inputs.email);
  if (!user) {
    throw new Error(
      `Invitation of ${inputs.email} to organisation ${inputs.organizationId} was accepted, but the user cannot be read back`,
    );
  }
  return propsOf(inputs, user);
}

/**
 * A create cut short before its user could be read back (see finishCreate)
 * records none: the next update reads it. Otherwise an update sends nothing
 * (only `redirectUrl` changes in place, and it matters only when inviting).
 */
const readsBack: OutputChange<typeof InvitationInputs, typeof InvitationOutputs> = {
  changedBy: [],
  alsoWhen: { recorded: "`userId` is not recorded (a create cut short)", holds: (olds) => olds.userId === undefined },
};

export const invitation = defineResource({
  typeName: "Invitation",
  description: "A user invited to an organisation. Destroying it revokes the user's access to the organisation.",
  idFormat: "<organizationId>/<email>",
  inputs: InvitationInputs,
  outputs: InvitationOutputs,
  updatedBy: { userId: readsBack, emailVerified: readsBack },
  replaceOn: ["organizationId", "email", "role"],

  // A person is a member of an organisation once, and inviting a member again keeps them: the e-mail address is the natural key.
  ownership: "createTakesIt",
  lookUp: async ({ client }, inputs) =>
    (await findUser(client, inputs.organizationId, inputs.email))
      ? [{ id: joinId(inputs.organizationId, inputs.email), label: inputs.email }]
      : [],

  async create({ client }, inputs) {
    await settleAction(
      client,
      () =>
        client.inviteUser({
          organizationId: inputs.organizationId,
          permissions: { users: [{ email: inputs.email }], organization: { role: inputs.role } },
          ...(inputs.redirectUrl ? { redirectUrl: inputs.redirectUrl } : {}),
        }),
      async () => (await findUser(client, inputs.organizationId, inputs.email)) !== undefined,
    );
    const id = joinId(inputs.organizationId, inputs.email);
    return { id, outs: await finishCreate(id, inputs, () => invitedUser(client, inputs)) };
  },

  async read({ client }, id, props) {
    const { organizationId, child: email } = splitId(id, "Invitation", "email");
    const user = await findUser(client, organizationId, email, props?.userId);
    if (!user) return undefined;
    const inputs: InvitationInputs = {
      organizationId,
      email,
      role: props?.role ?? "admin",
      ...(props?.redirectUrl ? { redirectUrl: props.redirectUrl } : {}),
    };
    return propsOf(inputs, user);
  },

  async update({ client }, _id, olds, news, changed) {
    if (updateMayChange(readsBack, olds, changed)) return invitedUser(client, news);
    return { ...olds, ...news };
  },

  async delete({ client }, _id, props) {
    const user = await findUser(client, props.organizationId, props.email, props.userId);
    if (user) await client.revokeOrganizationAccess({ organizationId: props.organizationId, userIds: [user.id] });
  },
});

/** The Invitation resource; its inputs, outputs and id: docs/resources/invitation.md. */
export const Invitation = resourceClass(invitation);
export type Invitation = InstanceType<typeof Invitation>;
export type InvitationArgs = ConstructorParameters<typeof Invitation>[1];
