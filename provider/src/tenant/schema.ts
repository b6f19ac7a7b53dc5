import { z } from "zod";
import * as api from "../api";
import { FrequencyName } from "../functions/plans";
import { domain } from "../resources/domain";
import { domainGroup } from "../resources/domainGroup";
import { organization } from "../resources/organization";
import { webhook } from "../resources/webhook";
import { mapping } from "../runtime/values";
import { DomainPolicyArgs } from "./policy";

// What a tenant declares, as schemas built from the fields of the resources it
// declares: a rule, default or message of a field is written once, on the
// resource, and the Tenant's types and the inventory's checks follow it.

/** What a tenant key must be; it is the stem of every resource name of the tenant. */
export const TENANT_KEY_RULE = "must be lower-case letters and digits in words joined by hyphens";

/** A tenant's key: lower-case words joined by hyphens, so it never holds the `/` that joins resource names. */
export const TenantKey = z
  .string()
  .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, { message: `${TENANT_KEY_RULE}, such as acme-corp` });

const domainInputs = domain.inputs.shape;

/** One domain of a tenant: the Domain's own settings, under the domain's name. */
export const TenantDomain = z.object({
  name: domainInputs.domain.describe(
    "The domain name, lower case; also the Domain's resource name, so unique in a stack.",
  ),
  type: domainInputs.type,
  setupRecordType: domainInputs.setupRecordType,
  zone: domainInputs.zone,
  group: domainGroup.inputs.shape.name
    .optional()
    .describe("The domain group holding the domain: the tenant's `group` when not given, else one of its `groups`."),
  verify: z
    .boolean()
    .optional()
    .describe("Wait in `up` until the service has verified the published record (a `DomainVerification`)."),
  policy: DomainPolicyArgs.optional().describe(
    "The domain's DMARC policy ramp and its stage: the record in `records` and the one `publishRecord` gets carry the stage's policy. Not for a record the service hosts (CNAME).",
  ),
});
export type TenantDomain = z.input<typeof TenantDomain>;

/** One webhook of a tenant, owned by the tenant's organisation. */
export const TenantWebhook = webhook.inputs.pick({ name: true, url: true, events: true });
export type TenantWebhook = z.input<typeof TenantWebhook>;

/** What destroying the tenant does: the organisation's own choices, and `keep`, which touches nothing on the service. */
export const TenantOnDelete = z.enum([...organization.inputs.shape.onDelete.unwrap().options, "keep"]);
export type TenantOnDelete = z.infer<typeof TenantOnDelete>;

/**
 * Where the tenant's subscription stands: `active` (assigned and kept active),
 * `suspended` (an adopted cancelled subscription, kept cancelled: the
 * organisation stays suspended) or `none` (no subscription is declared).
 */
export const TenantSubscription = z.enum(["active", "suspended", "none"]);
export type TenantSubscription = z.infer<typeof TenantSubscription>;

/**
 * Ids of objects that exist already on the service, adopted instead of
 * created (each resource's `importId`): moving tenants in from another stack,
 * a script or by-hand setup. Nothing adopted is changed or recreated.
 */
export const TenantIds = z.object({
  organization: z.string().min(1).optional().describe("The Organization's id."),
  group: z.string().min(1).optional().describe("The DomainGroup's id, `<organizationId>/<groupId>`."),
  groups: z
    .record(z.string(), z.string().min(1))
    .optional()
    .describe("Each further DomainGroup's id (`groups`), `<organizationId>/<groupId>`, by group name."),
  subscription: z.string().min(1).optional().describe("The Subscription's id, `<organizationId>/<subscriptionId>`."),
  domains: z
    .record(z.string(), z.string().min(1))
    .optional()
    .describe("Each Domain's id, `<organizationId>/<domain>`, by domain name."),
  admins: z
    .record(z.string(), z.string().min(1))
    .optional()
    .describe("Each Invitation's id, `<organizationId>/<email>`, by e-mail address."),
  webhooks: z.record(z.string(), z.string().min(1)).optional().describe("Each Webhook's object id, by webhook name."),
});
export type TenantIds = z.input<typeof TenantIds>;

/** A tenant's webhooks: owned by its organisation, which may have only so many. */
export const TenantWebhookList = z.array(mapping(TenantWebhook.shape)).max(api.MAX_WEBHOOKS_PER_OWNER, {
  message: `must list at most ${api.MAX_WEBHOOKS_PER_OWNER} webhooks, the service's limit per organisation`,
});

/** What a `plan` must be, in the words of its refusal. */
const PLAN_SHAPE = "must be an object with name (and frequency, currency)";

/** A tenant's plan in a program: a plan of the catalogue by name, with its price's frequency and currency. */
const TenantPlanArgs = z.strictObject(
  {
    name: z
      .string()
      .min(1, { message: "must name a plan of the partner's catalogue, such as Business" })
      .describe("A plan of the partner's catalogue, by name, such as `Business`."),
    frequency: z
      .union([FrequencyName, api.Frequency])
      .optional()
      .describe("The price's billing frequency, such as `yearly`."),
    currency: api.Currency.optional().describe("The price's currency."),
  },
  {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? "is not a known key (known: name, frequency, currency)"
        : issue.code === "invalid_type" && issue.input !== undefined
          ? PLAN_SHAPE
          : undefined,
  },
);

const aFunction = z.custom<(...args: never[]) => unknown>((value) => typeof value === "function", {
  message: "must be a function",
});

/**
 * A `Tenant`'s arguments in a program, checked at construction: the fields
 * the inventory's tenants are made of (the resources' own, above), so a
 * program's mistake is refused in the inventory's words, every one at once.
 */
export const TenantArguments = mapping({
  name: organization.inputs.shape.name,
  group: domainGroup.inputs.shape.name,
  groups: z
    .array(domainGroup.inputs.shape.name)
    .optional()
    .describe("Further domain groups, by name, that a domain's `group` may name."),
  plan: TenantPlanArgs.optional().describe("The plan the organisation subscribes to; no subscription when not given."),
  subscription: TenantSubscription.optional().describe(
    "Where the subscription stands: `active`, `suspended` (an adopted cancelled subscription kept cancelled) or `none`.",
  ),
  domains: z.array(mapping(TenantDomain.shape)).optional().describe("The organisation's domains."),
  admins: z.array(api.Email).optional().describe("E-mail addresses invited as the organisation's admins."),
  webhooks: TenantWebhookList.optional().describe("The organisation's webhooks."),
  onDelete: TenantOnDelete.optional().describe(
    "What destroying the tenant does: `delete` the organisation, `cancelSubscriptions` and keep it, or `keep` it untouched.",
  ),
  existingIds: mapping(TenantIds.shape)
    .optional()
    .describe("Ids of objects that exist on the service already, adopted instead of created."),
  plans: z.array(z.unknown()).optional(),
  publishRecord: aFunction.optional(),
  verifyDomain: aFunction.optional(),
  label: z.string().optional(),
});
