import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { DomainGroupName } from "../api";
import { createOrAdopt, joinId, splitId } from "../runtime/adopt";
import type { ResourceDefinition } from "../runtime/lifecycle";
import { type AdoptableArgs, DmarcResource } from "../runtime/resource";

export const DomainGroupInputs = z.object({
  organizationId: z.string().min(1, { message: "must be an organisation id" }),
  name: DomainGroupName,
});
export type DomainGroupInputs = z.infer<typeof DomainGroupInputs>;

export interface DomainGroupOutputs extends DomainGroupInputs {
  groupId: string;
  domains: string[];
}

export const domainGroup: ResourceDefinition<DomainGroupInputs, DomainGroupOutputs> = {
  typeName: "DomainGroup",
  inputs: DomainGroupInputs,
  replaceOn: ["organizationId"],

  async create({ client }, inputs) {
    const created = await createOrAdopt(
      client,
      () => client.createDomainGroup(inputs),
      async () => (await client.listDomainGroups(inputs.organizationId)).find((group) => group.name === inputs.name),
    );
    return {
      id: joinId(inputs.organizationId, created.id),
      outs: { ...inputs, name: created.name, groupId: created.id, domains: created.domains ?? [] },
    };
  },

  async read({ client }, id) {
    const { organizationId, child: groupId } = splitId(id, "DomainGroup", "groupId");
    const found = await client.getDomainGroup(organizationId, groupId);
    if (!found) return undefined;
    return { outs: { organizationId, name: found.name, groupId: found.id, domains: found.domains ?? [] } };
  },

  async update({ client }, _id, olds, news) {
    if (olds.name === news.name) return { ...olds, ...news };
    const updated = await client.updateDomainGroup(olds.organizationId, olds.groupId, { name: news.name });
    return { ...olds, ...news, name: updated.name, domains: updated.domains ?? olds.domains };
  },

  async delete({ client }, _id, props) {
    await client.deleteDomainGroup(props.organizationId, props.groupId);
  },
};

export interface DomainGroupArgs extends AdoptableArgs {
  /** Owning organisation. A different organisation replaces the group. */
  organizationId: pulumi.Input<string>;
  /** Group name. Updates in place. */
  name: pulumi.Input<string>;
}

/** A domain group: domains sharing policy and reporting. Resource id: `<organizationId>/<groupId>`. */
export class DomainGroup extends DmarcResource {
  declare readonly organizationId: pulumi.Output<string>;
  declare readonly name: pulumi.Output<string>;
  /**
   * The service's id of the group, the `groupId` of domains. Derived from the
   * resource id, so it stays known while a rename is previewed.
   */
  readonly groupId: pulumi.Output<string>;
  declare readonly domains: pulumi.Output<string[]>;

  constructor(name: string, args: DomainGroupArgs, opts?: pulumi.CustomResourceOptions) {
    super("DomainGroup", name, { ...args, domains: undefined }, opts);
    this.groupId = this.id.apply((id) => splitId(id, "DomainGroup", "groupId").child);
  }
}
