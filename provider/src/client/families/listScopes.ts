import type { ListScope } from "../batching/coalescing";

// The lists that answer reads (../batching/coalescing.ts), one per family and
// owner, named in one place because a write makes stale the lists of other
// families too: an organisation's delete, everything it held.

export const PARTNER: ListScope = { family: "organizations", owner: "" };
export const groupsOf = (organizationId: string): ListScope => ({ family: "domainGroups", owner: organizationId });
export const domainsOf = (organizationId: string): ListScope => ({ family: "domains", owner: organizationId });
export const webhooksOf = (ownerId: string): ListScope => ({ family: "webhooks", owner: ownerId });
export const subscriptionsOf = (organizationId: string): ListScope => ({
  family: "subscriptions",
  owner: organizationId,
});
/** A domain's group lists its domains, and a domain names its group. */
export const domainsAndGroupsOf = (organizationId: string) => [domainsOf(organizationId), groupsOf(organizationId)];
