// Tenants as data: every customer organisation of the partner, with its
// domains, plan, admins and webhooks, declared in tenants.yaml. Onboarding,
// a plan change or offboarding is a reviewed edit to that one file; an entry
// the service would refuse stops the preview, naming the tenant and the key.
// For hundreds of tenants, run the same file with `npx dmarc-fleet` instead:
// it spreads them over many small stacks (docs/guides/fleets.md).
import { join } from "node:path";
import * as dmarc from "pulumi-dmarc-partner";

const tenants = dmarc.declareTenants(dmarc.loadInventory(join(__dirname, "tenants.yaml")));

/** Per tenant key: the organisation id, the subscription's status, and every object's id (what a fleet adopts when the tenants move in). */
export const organizations = Object.fromEntries(
  tenants.map((tenant) => [
    tenant.key,
    { organizationId: tenant.organizationId, subscription: tenant.subscriptionStatus, ids: tenant.ids },
  ]),
);

/** Per domain: the DMARC record to publish in its DNS zone. */
export const dnsRecords = Object.fromEntries(
  tenants.flatMap((tenant) => Object.entries(tenant.domains).map(([name, domain]) => [name, domain.record])),
);

/** Per tenant key and webhook name: the signing secret its receiver verifies deliveries with (a Pulumi secret). */
export const webhookSecrets = Object.fromEntries(tenants.map((tenant) => [tenant.key, tenant.webhookSecrets]));
