import * as pulumi from "@pulumi/pulumi";
import type * as provider from "@pulumi/pulumi/provider";
import { z } from "zod";
import { domain } from "../resources/domain";
import { Rfc2136Record, type Rfc2136RecordArgs, rfc2136Record } from "../resources/rfc2136Record";
import { mapping } from "../runtime/values";
import { TenantArguments, TenantIds } from "../tenant/schema";
import { type PublishRecord, TENANT_TYPE, Tenant, type TenantArgs } from "../tenant/tenant";

// The Tenant as the plugin's component (`dmarc:index:Tenant`): a YAML or
// Python program declares a whole customer in one block, planned, checked
// and registered by the same Tenant a TypeScript program uses. What only a
// program can pass (functions, a catalogue fetched once) is left out; the
// records are published by RFC 2136 when `rfc2136` says where.

const record = rfc2136Record.inputs.shape;

/** Where the domains' records are published, as `Rfc2136Record` takes it. */
const Rfc2136Publishing = mapping({
  server: record.server,
  zone: record.zone,
  keyName: record.keyName,
  keyAlgorithm: record.keyAlgorithm,
  ttl: record.ttl,
  keySecret: record.keySecret,
});
type Rfc2136Publishing = z.input<typeof Rfc2136Publishing>;

/** What the component takes: the Tenant's arguments that are data, and where to publish the records. */
export const TenantComponentInputs = TenantArguments.omit({
  plans: true,
  publishRecord: true,
  verifyDomain: true,
  label: true,
}).extend({
  rfc2136: Rfc2136Publishing.optional().describe(
    "Publish each domain's record by RFC 2136 dynamic update signed with TSIG, as `Rfc2136Record` does; left out, the records are only outputs (`records`), for a DNS provider's record resources.",
  ),
});

/** What the component answers: the Tenant's outputs a program reads. */
export const TenantComponentOutputs = z.object({
  organizationId: z.string().describe("The organisation's id."),
  subscriptionStatus: z
    .string()
    .describe("The subscription's status (`active`, `suspended`, `expired`); `none` without a subscription."),
  records: z
    .record(z.string(), domain.outputs.shape.setupRecord)
    .describe("By domain name: the record to publish, at its `policy`'s stage where the domain has one."),
  webhookSecrets: z
    .record(z.string(), z.string())
    .describe("By webhook name: the signing secret (empty for an adopted webhook until its secret is rotated)."),
  ids: TenantIds.describe("The id of every object, in the shape of `existingIds`."),
});

/** The component's description in the schema. */
export const TENANT_COMPONENT_DESCRIPTION =
  "One customer of the partner: its organisation with domain groups, subscription, admin invitations, webhooks and domains (with their policy ramp), declared and checked as the TypeScript `Tenant` and the inventory do.";

/** Each domain's record as an `Rfc2136Record`, with the settings `rfc2136` gives (an Output when any is secret). */
function publishedBy(settings: pulumi.Input<Rfc2136Publishing>): PublishRecord {
  const given = pulumi.output(settings);
  const keys = Object.keys(Rfc2136Publishing.shape) as (keyof Rfc2136Publishing)[];
  const fields = Object.fromEntries(keys.map((key) => [key, given.apply((known) => known[key])]));
  return (setup, _domain, opts, domainName) =>
    new Rfc2136Record(
      `${domainName}/dns-record`,
      {
        ...fields,
        keySecret: pulumi.secret(fields.keySecret),
        name: setup.host,
        type: setup.recordType,
        value: setup.value,
      } as unknown as Rfc2136RecordArgs,
      opts,
    );
}

/** The plugin's `construct`: a Tenant named `name` from the component's inputs. */
export async function constructTenant(
  name: string,
  type: string,
  inputs: pulumi.Inputs,
  options: pulumi.ComponentResourceOptions,
): Promise<provider.ConstructResult> {
  if (type !== TENANT_TYPE) throw new Error(`the DMARC provider has no component ${type}`);
  const { rfc2136, ...declared } = inputs;
  const args = { ...declared, ...(rfc2136 === undefined ? {} : { publishRecord: publishedBy(rfc2136) }) };
  const tenant = new Tenant(name, args as TenantArgs, options);
  return {
    urn: tenant.urn,
    state: {
      organizationId: tenant.organizationId,
      subscriptionStatus: tenant.subscriptionStatus,
      records: tenant.records,
      webhookSecrets: tenant.webhookSecrets,
      ids: tenant.ids,
    },
  };
}
