import { z } from "zod";
import { OrganizationName, type Organization as OrganizationRecord } from "../api";
import type { DmarcClient } from "../client";
import { defineResource } from "../runtime/lifecycle";
import { resourceClass } from "../runtime/resource";
import { CLOCK_SKEW_ALLOWANCE_MS, settleCall } from "../runtime/settle";
import { displayName } from "./fields";
import { cancelActiveSubscriptions } from "./subscription";

/**
 * The organisation a create with this name made: the newest of that name not
 * recorded yet. Names are not unique, so only one created after `notBefore`
 * counts when that moment is known.
 */
async function findOrganization(
  client: DmarcClient,
  name: string,
  known: ReadonlySet<string>,
  notBefore: number | undefined,
): Promise<OrganizationRecord | undefined> {
  const candidates = (await client.listOrganizations()).filter(
    (org) =>
      org.name === name &&
      !known.has(org.id) &&
      (notBefore === undefined || Date.parse(org.createdAt) >= notBefore - CLOCK_SKEW_ALLOWANCE_MS),
  );
  return candidates.sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt))[0];
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

  lookUp: async ({ client, known, notBefore }, inputs) =>
    (await findOrganization(client, inputs.name, known, notBefore))?.id,

  async create({ client }, inputs) {
    const startedAt = Date.now();
    const created = await settleCall(
      client,
      () => client.createOrganization({ name: inputs.name }),
      () => findOrganization(client, inputs.name, new Set(), startedAt),
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
