import { z } from "zod";
import { OrganizationName } from "../api";
import type { DmarcClient } from "../client";
import { type CreateCandidate, defineResource } from "../runtime/lifecycle";
import { resourceClass } from "../runtime/resource";
import { madeSince, settleCall } from "../runtime/settle";
import { displayName } from "./fields";
import { cancelActiveSubscriptions } from "./subscription";

/** Every organisation of the partner with this name: names are not unique. */
async function organizationsNamed(client: DmarcClient, name: string): Promise<CreateCandidate[]> {
  return (await client.listOrganizations())
    .filter((org) => org.name === name)
    .map((org) => ({ id: org.id, label: org.name, createdAt: org.createdAt }));
}

export const organization = defineResource({
  typeName: "Organization",
  description:
    "A customer organisation (tenant) of the partner, created under the partner's credentials. Destroying it cancels its active subscriptions first, then deletes it, or keeps it (`onDelete`).",
  idFormat: "<organizationId>",
  inputs: z.object({
    name: displayName(OrganizationName).describe("Name of the customer organisation."),
    onDelete: z
      .enum(["delete", "cancelSubscriptions"])
      .describe(
        "What destroying the resource does. `delete`: cancel every active subscription, then delete the organisation. `cancelSubscriptions`: cancel every active subscription and keep the organisation and its data, only forgetting it in state.",
      )
      .default("delete"),
  }),
  outputs: z.object({
    createdAt: z.string().describe("When the service created the organisation (ISO 8601)."),
  }),
  idOutputs: {
    organizationId: { description: "The service's id of the organisation: the resource id.", fromId: (id) => id },
  },
  updatedBy: { createdAt: [] },
  replaceOn: [],

  ownership: "madeDuringRun",
  lookUp: ({ client }, inputs) => organizationsNamed(client, inputs.name),

  async create({ client }, inputs) {
    const startedAt = Date.now();
    const created = await settleCall(
      client,
      () => client.createOrganization({ name: inputs.name }),
      async () => {
        const made = madeSince(
          await organizationsNamed(client, inputs.name),
          startedAt,
          `Organization "${inputs.name}"`,
        );
        return made && client.readOrganization(made.id);
      },
    );
    return { id: created.id, outs: { ...inputs, name: created.name, createdAt: created.createdAt } };
  },

  async read({ client }, id, props) {
    const found = await client.readOrganization(id);
    return found && { name: found.name, onDelete: props?.onDelete ?? "delete", createdAt: found.createdAt };
  },

  async update({ client }, id, olds, news, changed) {
    const current = changed.has("name") ? await client.updateOrganization(id, { name: news.name }) : undefined;
    return { ...olds, ...news, name: current?.name ?? news.name };
  },

  async delete({ client }, id, props) {
    const exists = await cancelActiveSubscriptions(client, id);
    if (!exists || props.onDelete === "cancelSubscriptions") return;
    await client.deleteOrganization(id);
  },
});

/** The Organization resource; its inputs, outputs and id: docs/resources/organization.md. */
export const Organization = resourceClass(organization);
export type Organization = InstanceType<typeof Organization>;
export type OrganizationArgs = ConstructorParameters<typeof Organization>[1];
