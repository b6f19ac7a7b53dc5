import * as pulumi from "@pulumi/pulumi";
import * as dmarc from "pulumi-dmarc-partner";
import { type Inventory, InventoryError, type Tenant } from "./inventory";

/** The Pulumi type of the component grouping one tenant's resources in previews. */
export const TENANT_TYPE = "dmarc-tenants:index:Tenant";

/** One tenant of the inventory as resources: its organisation and everything under it. */
export class TenantResources extends pulumi.ComponentResource {
  readonly key: string;
  readonly organization: dmarc.Organization;
  readonly group: dmarc.DomainGroup;
  readonly subscription: dmarc.Subscription;
  /** By domain name. */
  readonly domains: Record<string, dmarc.Domain>;
  /** By e-mail address. */
  readonly invitations: Record<string, dmarc.Invitation>;
  /** By webhook name. */
  readonly webhooks: Record<string, dmarc.Webhook>;

  /**
   * Resource names are the tenant's key followed by what the resource is
   * (`acme-corp/group`, `acme-corp/admin/alice@acme.example`); a domain is
   * named after itself. Keys hold no `/`, so two tenants never clash.
   */
  constructor(tenant: Tenant, priceId: pulumi.Input<string>, opts?: pulumi.ComponentResourceOptions) {
    super(TENANT_TYPE, tenant.key, {}, opts);
    this.key = tenant.key;
    const parent = { parent: this };
    const name = (...parts: string[]) => [tenant.key, ...parts].join("/");

    this.organization = new dmarc.Organization(tenant.key, { name: tenant.name }, parent);
    const organizationId = this.organization.organizationId;
    this.group = new dmarc.DomainGroup(name("group"), { organizationId, name: tenant.group }, parent);
    this.subscription = new dmarc.Subscription(name("subscription"), { organizationId, priceId }, parent);
    this.invitations = Object.fromEntries(
      tenant.admins.map((email) => [
        email,
        new dmarc.Invitation(name("admin", email), { organizationId, email, role: "admin" }, parent),
      ]),
    );
    // Owned by the organisation, so they receive its events only and go when it goes.
    this.webhooks = Object.fromEntries(
      tenant.webhooks.map((webhook) => [
        webhook.name,
        new dmarc.Webhook(
          name("webhook", webhook.name),
          { name: webhook.name, url: webhook.url, events: webhook.events, ownerId: organizationId },
          parent,
        ),
      ]),
    );
    // After the subscription, so the plan's domain limit applies rather than the trial's; after the
    // webhooks, so they see each domain's domain.created event.
    const before = [this.subscription, ...Object.values(this.webhooks)];
    this.domains = Object.fromEntries(
      tenant.domains.map((domain) => [
        domain.name,
        new dmarc.Domain(
          domain.name,
          { organizationId, domain: domain.name, type: domain.type, groupId: this.group.groupId },
          { parent: this, dependsOn: before },
        ),
      ]),
    );
    this.registerOutputs({ organizationId });
  }
}

/** The price id for a tenant's plan and frequency, or an error pointing at the tenant's `plan`. */
export function priceIdFor(inventory: Inventory, tenant: Tenant, plans: readonly dmarc.api.Plan[]): string {
  try {
    return dmarc.selectPriceId(plans, { plan: tenant.plan, frequency: tenant.frequency, currency: tenant.currency });
  } catch (error) {
    throw new InventoryError([`${inventory.source}: ${tenant.label} plan: ${(error as Error).message}`]);
  }
}

/**
 * Declares every tenant of the inventory. The catalogue is fetched once for
 * all of them; a plan it does not have fails that tenant's subscription with
 * the tenant named.
 */
export function declareTenants(inventory: Inventory, plans: pulumi.Input<dmarc.api.Plan[]>): TenantResources[] {
  const catalogue = pulumi.output(plans);
  return inventory.tenants.map(
    (tenant) =>
      new TenantResources(
        tenant,
        catalogue.apply((known) => priceIdFor(inventory, tenant, known)),
      ),
  );
}
