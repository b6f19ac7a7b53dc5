// The public face of the package: what partners import.
import { domain } from "./resources/domain";
import { domainGroup } from "./resources/domainGroup";
import { invitation } from "./resources/invitation";
import { organization } from "./resources/organization";
import { subscription } from "./resources/subscription";
import { webhook } from "./resources/webhook";

export * as api from "./api";
export { createMagicLink, type MagicLinkArgs } from "./functions/magicLink";
export { type BillingFrequency, getPlans, getPriceId, type PriceSelector, selectPriceId } from "./functions/plans";
export { checkPlans, type DeclareOptions, declareTenants, tenantArgs } from "./inventory/declare";
export {
  type Inventory,
  InventoryError,
  type InventoryTenant,
  loadInventory,
  parseInventory,
} from "./inventory/inventory";
export { type DnsSetupRecord, Domain, type DomainArgs } from "./resources/domain";
export { DomainGroup, type DomainGroupArgs } from "./resources/domainGroup";
export { DomainVerification, type DomainVerificationArgs } from "./resources/domainVerification";
export { Invitation, type InvitationArgs } from "./resources/invitation";
export { Organization, type OrganizationArgs } from "./resources/organization";
export { Subscription, type SubscriptionArgs, type SubscriptionStatus } from "./resources/subscription";
export { Webhook, type WebhookArgs } from "./resources/webhook";
export { CONFIG_NAMESPACE, SETTINGS } from "./runtime/config";
export { type AnyResourceDefinition, type LifecycleContext, lifecycleContext } from "./runtime/lifecycle";
export {
  type PublishRecord,
  TENANT_TYPE,
  Tenant,
  type TenantArgs,
  type TenantDomain,
  TenantError,
  type TenantIds,
  type TenantOnDelete,
  type TenantPlan,
  type TenantWebhook,
  type VerifyDomain,
} from "./tenant/tenant";

/** Each resource's schemas and lifecycle functions, for tools that drive them with a client and no engine (the benchmark's baseline). */
export const resourceDefinitions = { organization, domainGroup, domain, webhook, subscription, invitation };

/**
 * Called by the provider of every resource in the provider process (and by
 * the serialized provider that states written by 0.1.0 hold). Not part of the
 * API partners use directly.
 */
export { dynamicProviderHost } from "./providerHost";
