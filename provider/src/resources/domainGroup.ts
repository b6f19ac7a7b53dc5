import { z } from "zod";
import { DomainGroupName, type DomainGroup as DomainGroupRecord } from "../api";
import type { DmarcClient } from "../client";
import { joinId, splitId } from "../runtime/ids";
import { defineResource, updateMayChange } from "../runtime/lifecycle";
import { resourceClass } from "../runtime/resource";
import { deleteWhenFreed, settleCall } from "../runtime/settle";
import { displayName, OrganizationId } from "./fields";

const groupIdOf = (id: string) => splitId(id, "DomainGroup", "groupId").child;

async function findGroup(
  client: DmarcClient,
  inputs: { organizationId: string; name: string },
  known: ReadonlySet<string>,
): Promise<DomainGroupRecord | undefined> {
  return (await client.listDomainGroups(inputs.organizationId)).find(
    (group) => group.name === inputs.name && !known.has(joinId(inputs.organizationId, group.id)),
  );
}

/** Renaming is all an update sends, and the service answers it with the group's domains as they are now. */
const renames = { changedBy: ["name"] } as const;

export const domainGroup = defineResource({
  typeName: "DomainGroup",
  description: "A domain group of an organisation: domains sharing policy and reporting.",
  idFormat: "<organizationId>/<groupId>",
  inputs: z.object({
    organizationId: OrganizationId.describe("The organisation the group belongs to."),
    name: displayName(DomainGroupName).describe("Name of the group."),
  }),
  outputs: z.object({
    domains: z.array(z.string()).describe("Names of the group's domains, as the service lists them."),
  }),
  idOutputs: {
    groupId: { description: "The service's id of the group: the `groupId` of its domains.", fromId: groupIdOf },
  },
  updatedBy: { domains: renames },
  replaceOn: ["organizationId"],

  async lookUp({ client, known }, inputs) {
    const found = await findGroup(client, inputs, known);
    return found && joinId(inputs.organizationId, found.id);
  },

  async create({ client }, inputs) {
    const created = await settleCall(
      client,
      () => client.createDomainGroup(inputs),
      () => findGroup(client, inputs, new Set()),
    );
    return {
      id: joinId(inputs.organizationId, created.id),
      outs: { ...inputs, name: created.name, domains: created.domains ?? [] },
    };
  },

  async read({ client }, id) {
    const { organizationId, child: groupId } = splitId(id, "DomainGroup", "groupId");
    const found = await client.readDomainGroup(organizationId, groupId);
    return found && { organizationId, name: found.name, domains: found.domains ?? [] };
  },

  async update({ client }, id, olds, news, changed) {
    if (!updateMayChange(renames, olds, changed)) return { ...olds, ...news };
    const updated = await client.updateDomainGroup(olds.organizationId, groupIdOf(id), { name: news.name });
    return { ...olds, ...news, name: updated.name, domains: updated.domains ?? olds.domains };
  },

  async delete({ client }, id, props) {
    const groupId = groupIdOf(id);
    await deleteWhenFreed(
      client,
      `DomainGroup ${id}`,
      () => client.deleteDomainGroup(props.organizationId, groupId),
      async () => (await client.readDomainGroup(props.organizationId, groupId))?.domains ?? [],
    );
  },
});

/** The DomainGroup resource; its inputs, outputs and id: docs/resources/domainGroup.md. */
export const DomainGroup = resourceClass(domainGroup);
export type DomainGroup = InstanceType<typeof DomainGroup>;
export type DomainGroupArgs = ConstructorParameters<typeof DomainGroup>[1];
