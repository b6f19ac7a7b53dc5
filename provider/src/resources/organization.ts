import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { OrganizationName } from "../api";
import { type DmarcClient, isNotFound } from "../client";
import { createOrAdopt } from "../runtime/adopt";
import type { ResourceDefinition } from "../runtime/lifecycle";
import { type AdoptableArgs, DmarcResource } from "../runtime/resource";
import { cancelSubscription } from "./subscription";

export const OrganizationInputs = z.object({
  name: OrganizationName,
  /**
   * What destroying the resource does. `delete` (default): cancel every active
   * subscription, then delete the organisation. `cancelSubscriptions`: cancel
   * them and keep the organisation and its data, only forgetting it in state.
   */
  onDelete: z.enum(["delete", "cancelSubscriptions"]).default("delete"),
});
export type OrganizationInputs = z.infer<typeof OrganizationInputs>;

export interface OrganizationOutputs extends OrganizationInputs {
  organizationId: string;
  createdAt: string;
}

/**
 * Cancels every subscription of the organisation that is not cancelled yet;
 * the service refuses to delete it otherwise. False when the organisation is gone.
 */
export async function cancelActiveSubscriptions(client: DmarcClient, organizationId: string): Promise<boolean> {
  let subscriptions: Awaited<ReturnType<DmarcClient["listSubscriptions"]>>;
  try {
    subscriptions = await client.listSubscriptions(organizationId);
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
  for (const subscription of subscriptions) {
    if (subscription.cancelledAt === null) await cancelSubscription(client, organizationId, subscription.id);
  }
  return true;
}

export const organization: ResourceDefinition<OrganizationInputs, OrganizationOutputs> = {
  typeName: "Organization",
  inputs: OrganizationInputs,
  replaceOn: [],

  async create({ client }, inputs) {
    const startedAt = Date.now();
    const created = await createOrAdopt(
      client,
      () => client.createOrganization({ name: inputs.name }),
      async () => {
        const candidates = (await client.listOrganizations()).filter(
          (org) => org.name === inputs.name && Date.parse(org.createdAt) >= startedAt - 5_000,
        );
        return candidates.sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt))[0];
      },
    );
    return {
      id: created.id,
      outs: { ...inputs, name: created.name, organizationId: created.id, createdAt: created.createdAt },
    };
  },

  async read({ client }, id, props) {
    const found = await client.getOrganization(id);
    if (!found) return undefined;
    return {
      outs: {
        name: found.name,
        onDelete: props?.onDelete ?? "delete",
        organizationId: found.id,
        createdAt: found.createdAt,
      },
    };
  },

  async update({ client }, id, olds, news) {
    const current = olds.name === news.name ? undefined : await client.updateOrganization(id, { name: news.name });
    return { ...olds, ...news, name: current?.name ?? news.name };
  },

  async delete({ client }, id, props) {
    const exists = await cancelActiveSubscriptions(client, id);
    if (!exists || props.onDelete === "cancelSubscriptions") return;
    await client.deleteOrganization(id);
  },
};

export interface OrganizationArgs extends AdoptableArgs {
  /** Name of the customer organisation, 1 to 128 characters. Updates in place. */
  name: pulumi.Input<string>;
  /** `delete` (default) or `cancelSubscriptions` to offboard while keeping the organisation and its data. */
  onDelete?: pulumi.Input<"delete" | "cancelSubscriptions">;
}

/** A customer organisation (tenant), created under the partner's credentials. */
export class Organization extends DmarcResource {
  declare readonly name: pulumi.Output<string>;
  declare readonly onDelete: pulumi.Output<"delete" | "cancelSubscriptions">;
  /**
   * The service's id of the organisation. It is the resource id, so it stays
   * known while a rename is previewed and dependents do not show as replaced.
   */
  readonly organizationId: pulumi.Output<string>;
  declare readonly createdAt: pulumi.Output<string>;

  constructor(name: string, args: OrganizationArgs, opts?: pulumi.CustomResourceOptions) {
    super("Organization", name, { ...args, createdAt: undefined }, opts);
    this.organizationId = this.id;
  }
}
