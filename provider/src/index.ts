// The public face of the package: what partners import.
export * as api from "./api";
export { createMagicLink, type MagicLinkArgs } from "./functions/magicLink";
export { type BillingFrequency, getPlans, getPriceId, type PriceSelector, selectPriceId } from "./functions/plans";
export {
  checkPlans,
  type DeclareOptions,
  declarationOf,
  declareTenants,
  inventoryTenantPlan,
  tenantArgs,
} from "./inventory/declare";
export {
  domainPolicyOf,
  type Inventory,
  InventoryError,
  type InventoryTenant,
  type InventoryTombstone,
  loadInventory,
  parseInventory,
} from "./inventory/inventory";
/**
 * The host every provider module hands its calls to in the provider process;
 * states written by 0.1.0 call it directly. Not part of the API partners use.
 */
export { dynamicProviderHost } from "./providerHost";
/** Each resource's schemas and lifecycle functions, for tools that drive them with a client and no engine (the benchmark's baseline). */
export { resourceDefinitions } from "./registry";
export { type DnsSetupRecord, Domain, type DomainArgs } from "./resources/domain";
export { DomainGroup, type DomainGroupArgs } from "./resources/domainGroup";
export { DomainVerification, type DomainVerificationArgs } from "./resources/domainVerification";
export { Invitation, type InvitationArgs } from "./resources/invitation";
export { Organization, type OrganizationArgs } from "./resources/organization";
export { Rfc2136Record, type Rfc2136RecordArgs } from "./resources/rfc2136Record";
export { Subscription, type SubscriptionArgs, type SubscriptionStatus } from "./resources/subscription";
export { Webhook, type WebhookArgs } from "./resources/webhook";
export { CONFIG_NAMESPACE, SETTINGS } from "./runtime/config";
export { type AnyResourceDefinition, type LifecycleContext, lifecycleContext } from "./runtime/lifecycle";
export {
  type EntryPart,
  OutputOf,
  type PlannedObject,
  type PlannedType,
  PriceOf,
  type TenantDeclaration,
  TenantPlanError,
  tenantPlan,
} from "./tenant/plan";
export {
  DEFAULT_EVIDENCE,
  DEFAULT_FLOOR,
  DEFAULT_STEPS,
  type DomainPolicy,
  DomainPolicyArgs,
  type PolicyWord,
  parseStage,
  recordWithStage,
  type Stage,
  stageName,
} from "./tenant/policy";
export { STACK_POLICY_KEY, stackPolicies } from "./tenant/stackPolicies";
export { PolicyError, stagedRecord } from "./tenant/staging";
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
  type TenantSubscription,
  type TenantWebhook,
  type VerifyDomain,
} from "./tenant/tenant";
