// Tenants as data: every customer organisation of the partner, with its
// domains, plan, admins and webhooks, declared in tenants.yaml. Onboarding,
// a plan change or offboarding is a reviewed edit to that one file; an entry
// the service would refuse stops the preview, naming the tenant and the key.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as dmarc from "pulumi-dmarc-partner";
import { parseInventory } from "./inventory";
import { declareTenants } from "./tenants";

const inventory = parseInventory(readFileSync(join(__dirname, "tenants.yaml"), "utf8"));
const tenants = declareTenants(inventory, dmarc.getPlans());

/** Per tenant key: the organisation id and the subscription's status. */
export const organizations = Object.fromEntries(
  tenants.map((tenant) => [
    tenant.key,
    { organizationId: tenant.organization.organizationId, subscription: tenant.subscription.status },
  ]),
);

/** Per domain: the DMARC record to publish in its DNS zone. */
export const dnsRecords = Object.fromEntries(
  tenants.flatMap((tenant) => Object.entries(tenant.domains).map(([name, domain]) => [name, domain.setupRecord])),
);

/** Per tenant key and webhook name: the signing secret its receiver verifies deliveries with (a Pulumi secret). */
export const webhookSecrets = Object.fromEntries(
  tenants.map((tenant) => [
    tenant.key,
    Object.fromEntries(Object.entries(tenant.webhooks).map(([name, webhook]) => [name, webhook.secret])),
  ]),
);
