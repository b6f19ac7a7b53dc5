import type { DmarcClient } from "pulumi-dmarc-partner/client";

// The recovery after a killed `pulumi up`, as test/reliability/README.md
// describes it for operators: each pending create of the exported state is
// looked up in the service by its inputs. Found, it moves into the state's
// resources under the service's id (the next refresh reads it back); not
// found, the create never happened and the operation is dropped. A webhook is
// the exception: its secret came only with the lost answer, so the orphan is
// deleted and the next `up` creates it afresh.

const TYPE_PREFIX = "pulumi-nodejs:dynamic/dmarc:";

interface StateResource {
  urn: string;
  type: string;
  id?: string;
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
  [field: string]: unknown;
}

export interface Deployment {
  deployment: {
    resources?: StateResource[];
    pending_operations?: { type: string; resource: StateResource }[];
    [field: string]: unknown;
  };
  [field: string]: unknown;
}

export interface Settlement {
  deployment: Deployment;
  /** Pending creates whose object exists, now in the state under its id. */
  adopted: string[];
  /** Pending creates that never reached the service, dropped. */
  cleared: string[];
  /** Webhooks created by a lost answer, deleted so that `up` creates them with a secret again. */
  deletedWebhooks: string[];
}

type Lookup = (client: DmarcClient, inputs: Record<string, string>, known: Set<string>) => Promise<string | undefined>;

/** How each resource type's object is found from its declared inputs, and the resource id it then has. */
const lookups: Record<string, Lookup> = {
  async Organization(client, { name }, known) {
    const found = (await client.listOrganizations()).filter((org) => org.name === name && !known.has(org.id));
    return found.sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt))[0]?.id;
  },
  async DomainGroup(client, { organizationId = "", name }, known) {
    const found = (await client.listDomainGroups(organizationId)).find(
      (group) => group.name === name && !known.has(`${organizationId}/${group.id}`),
    );
    return found && `${organizationId}/${found.id}`;
  },
  async Domain(client, { organizationId = "", domain = "" }) {
    return (await client.getDomain(organizationId, domain)) && `${organizationId}/${domain}`;
  },
  async Webhook(client, { ownerId = "", name, url }, known) {
    const found = (await client.listWebhooks(ownerId)).find(
      (hook) => hook.name === name && hook.url === url && !known.has(hook.objectId),
    );
    return found?.objectId;
  },
  async Subscription(client, { organizationId = "", priceId }, known) {
    const found = (await client.listSubscriptions(organizationId)).find(
      (subscription) =>
        subscription.cancelledAt === null &&
        subscription.items.some((item) => item.priceId === priceId) &&
        !known.has(`${organizationId}/${subscription.id}`),
    );
    return found && `${organizationId}/${found.id}`;
  },
  async Invitation(client, { organizationId = "", email = "" }) {
    return (await client.getUser(organizationId, email)) && `${organizationId}/${email}`;
  },
};

export async function settlePendingCreates(exported: Deployment, client: DmarcClient): Promise<Settlement> {
  const deployment: Deployment = structuredClone(exported);
  const resources = deployment.deployment.resources ?? [];
  const known = new Set(resources.map((resource) => resource.id).filter((id): id is string => id !== undefined));
  const settlement: Settlement = { deployment, adopted: [], cleared: [], deletedWebhooks: [] };
  const remaining: NonNullable<Deployment["deployment"]["pending_operations"]> = [];

  for (const operation of deployment.deployment.pending_operations ?? []) {
    const { resource } = operation;
    const typeName = resource.type.slice(TYPE_PREFIX.length);
    const lookup = lookups[typeName];
    if (operation.type !== "creating" || !resource.type.startsWith(TYPE_PREFIX) || lookup === undefined) {
      // Pending updates and deletes are settled by `pulumi refresh` itself.
      remaining.push(operation);
      continue;
    }
    const inputs = resource.inputs as Record<string, string>;
    const id = await lookup(client, inputs, known);
    if (id === undefined) {
      settlement.cleared.push(resource.urn);
    } else if (typeName === "Webhook") {
      await client.deleteWebhook(id);
      settlement.deletedWebhooks.push(resource.urn);
    } else {
      known.add(id);
      // Dependents of a pending create never started, so appending keeps the state's order valid.
      resources.push({ ...resource, id, outputs: resource.inputs ?? {} });
      settlement.adopted.push(resource.urn);
    }
  }
  deployment.deployment.resources = resources;
  deployment.deployment.pending_operations = remaining;
  return settlement;
}
