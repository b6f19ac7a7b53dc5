import type { StateSnapshot } from "dmarc-partner-emulator";
import * as dmarc from "pulumi-dmarc-partner";

// A fleet of tenants as a partner's GitOps repository declares them, and the
// emulator's state reduced to what such a declaration can be compared with:
// one line per object, named by what the program declared rather than by the
// ids the service chose, so duplicates and orphans show up as extra lines.

/** Resources per tenant: organisation, group, two domains, webhook, subscription, invitation. */
export const RESOURCES_PER_TENANT = 7;

export interface Tenant {
  index: number;
  organization: string;
  domains: { name: string; type: "sending" | "parked" }[];
  webhookUrl: string;
  admin: string;
}

export function tenants(count: number): Tenant[] {
  return Array.from({ length: count }, (_, index) => ({
    index,
    organization: `Tenant ${index} Ltd`,
    domains: [
      { name: `t${index}.example`, type: "sending" },
      { name: `t${index}-parked.example`, type: "parked" },
    ],
    // Nothing listens on the discard port: deliveries fail at once and stay on this machine.
    webhookUrl: `http://127.0.0.1:9/t${index}`,
    admin: `admin@t${index}.example`,
  }));
}

/** A program folder's index.ts running {@link fleetProgram} with `count` tenants. */
export function fleetProgramSource(count: number): string {
  return `import { fleetProgram } from "../../../test/reliability/fleet";\n\nexport = fleetProgram(${count});\n`;
}

/** The program: every tenant fully onboarded, its webhook owned by the organisation (at most 5 per owner). */
export function fleetProgram(count: number) {
  return async () => {
    const priceId = dmarc.getPriceId({ plan: "Starter", frequency: "monthly" });
    const organizationIds = tenants(count).map((tenant) => {
      const org = new dmarc.Organization(`t${tenant.index}`, { name: tenant.organization });
      const group = new dmarc.DomainGroup(`t${tenant.index}-main`, {
        organizationId: org.organizationId,
        name: "main",
      });
      for (const domain of tenant.domains) {
        new dmarc.Domain(domain.name, {
          organizationId: org.organizationId,
          domain: domain.name,
          type: domain.type,
          groupId: group.groupId,
        });
      }
      new dmarc.Webhook(`t${tenant.index}-events`, {
        name: `t${tenant.index} events`,
        url: tenant.webhookUrl,
        events: ["domain.created", "domain.verified"],
        ownerId: org.organizationId,
      });
      new dmarc.Subscription(`t${tenant.index}-plan`, { organizationId: org.organizationId, priceId });
      new dmarc.Invitation(`t${tenant.index}-admin`, { organizationId: org.organizationId, email: tenant.admin });
      return org.organizationId;
    });
    return { organizationIds };
  };
}

/** What the emulator must hold after the fleet converged: exactly these lines, each once. */
export function declaredInventory(count: number, priceId: string): string[] {
  return tenants(count)
    .flatMap((tenant) => [
      `organization ${tenant.organization}`,
      `group ${tenant.organization} / main`,
      ...tenant.domains.map((domain) => `domain ${tenant.organization} / ${domain.name} ${domain.type} in main`),
      `webhook ${tenant.organization} / t${tenant.index} events ${tenant.webhookUrl} domain.created,domain.verified active`,
      `subscription ${tenant.organization} / ${priceId} active`,
      `user ${tenant.organization} / ${tenant.admin} admin`,
    ])
    .sort();
}

/** The objects one partner holds in the emulator, one line each, in the terms of {@link declaredInventory}. */
export function inventory(snapshot: StateSnapshot, partnerId: string): string[] {
  const organizations = new Map(
    snapshot.organizations
      .filter((organization) => organization.partnerId === partnerId)
      .map((organization) => [organization.id, organization.name]),
  );
  const groups = new Map(snapshot.domainGroups.map((group) => [group.id, group.name]));
  const owner = (organizationId: string) =>
    organizations.get(organizationId) ?? `(not an organisation: ${organizationId})`;
  const mine = <T extends { partnerId: string }>(records: T[]) => records.filter((r) => r.partnerId === partnerId);
  return [
    ...[...organizations.values()].map((name) => `organization ${name}`),
    ...mine(snapshot.domainGroups).map((group) => `group ${owner(group.organizationId)} / ${group.name}`),
    ...mine(snapshot.domains).map(
      (domain) =>
        `domain ${owner(domain.organizationId)} / ${domain.domain} ${domain.type} in ${groups.get(domain.groupId)}`,
    ),
    ...mine(snapshot.webhooks).map(
      (hook) =>
        `webhook ${owner(hook.ownerId)} / ${hook.name} ${hook.url} ${hook.events.join(",")} ${hook.active ? "active" : "inactive"}`,
    ),
    ...mine(snapshot.subscriptions).map(
      (subscription) =>
        `subscription ${owner(subscription.organizationId)} / ${subscription.priceId} ${subscription.cancelledAt === null ? "active" : "cancelled"}`,
    ),
    ...mine(snapshot.users).flatMap((user) =>
      Object.entries(user.memberships).map(
        ([organizationId, role]) => `user ${owner(organizationId)} / ${user.email} ${role}`,
      ),
    ),
  ].sort();
}

/** The service ids the stack's state records, by resource type, from `pulumi stack export` (deployment v3). */
export function stateIds(deployment: { deployment: { resources?: { type: string; id?: string }[] } }): string[] {
  return (deployment.deployment.resources ?? [])
    .filter((resource) => resource.type.startsWith("pulumi-nodejs:dynamic/dmarc:"))
    .map((resource) => `${resource.type.slice("pulumi-nodejs:dynamic/dmarc:".length)} ${resource.id}`)
    .sort();
}

/** The ids the emulator holds for one partner, spelled as the resources spell them (see AdoptableArgs). */
export function serviceIds(snapshot: StateSnapshot, partnerId: string): string[] {
  const mine = <T extends { partnerId: string }>(records: T[]) => records.filter((r) => r.partnerId === partnerId);
  return [
    ...mine(snapshot.organizations).map((organization) => `Organization ${organization.id}`),
    ...mine(snapshot.domainGroups).map((group) => `DomainGroup ${group.organizationId}/${group.id}`),
    ...mine(snapshot.domains).map((domain) => `Domain ${domain.organizationId}/${domain.domain}`),
    ...mine(snapshot.webhooks).map((hook) => `Webhook ${hook.objectId}`),
    // The fleet never changes a price, so each subscription is still the one that named its resource.
    ...mine(snapshot.subscriptions).map(
      (subscription) => `Subscription ${subscription.organizationId}/${subscription.id}`,
    ),
    ...mine(snapshot.users).flatMap((user) =>
      Object.keys(user.memberships).map((organizationId) => `Invitation ${organizationId}/${user.email}`),
    ),
  ].sort();
}
