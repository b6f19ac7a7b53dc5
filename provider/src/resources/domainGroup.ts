import { z } from "zod";
import { DomainGroupName } from "../api";
import type { DmarcClient } from "../client";
import { joinId, splitId } from "../runtime/ids";
import { type CreateCandidate, defineResource, updateMayChange } from "../runtime/lifecycle";
import { resourceClass } from "../runtime/resource";
import { AmbiguousCreateError, deleteWhenFreed, madeSince, PROCESS_STARTED_AT, settleCall } from "../runtime/settle";
import { displayName, OrganizationId } from "./fields";

const groupIdOf = (id: string) => splitId(id, "DomainGroup", "groupId").child;

/**
 * Every group of the organisation with this name: names are not unique, and
 * the service dates a group only by its organisation.
 */
async function groupsNamed(
  client: DmarcClient,
  inputs: { organizationId: string; name: string },
): Promise<CreateCandidate[]> {
  const named = (await client.listDomainGroups(inputs.organizationId)).filter((group) => group.name === inputs.name);
  if (named.length === 0) return [];
  const organizationCreatedAt = (await client.readOrganization(inputs.organizationId))?.createdAt;
  return named.map((group) => ({
    id: joinId(inputs.organizationId, group.id),
    label: `${group.name} in ${inputs.organizationId}`,
    ...(organizationCreatedAt ? { organizationCreatedAt } : {}),
  }));
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

  ownership: "madeDuringRun",
  lookUp: ({ client }, inputs) => groupsNamed(client, inputs),

  async create({ client }, inputs) {
    // Only an organisation made during this run dates the groups in it: one made earlier may hold a person's group of this name.
    const created = await settleCall(
      client,
      () => client.createDomainGroup(inputs),
      async () => {
        const what = `DomainGroup "${inputs.name}" of ${inputs.organizationId}`;
        const named = await groupsNamed(client, inputs);
        const made = madeSince(named, PROCESS_STARTED_AT, what);
        if (!made && named.length > 0) throw new AmbiguousCreateError(what, named);
        return made && client.readDomainGroup(inputs.organizationId, splitId(made.id, "DomainGroup", "groupId").child);
      },
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
