// One customer tenant, declared in the order the service's spec gives:
// onboarding (organisation, domain group, webhook, domain, DNS record, the
// service's verification) and partner (admin invitation, plan picked by name,
// magic link).
import * as pulumi from "@pulumi/pulumi";
import * as dmarc from "pulumi-dmarc-partner";

const demo = new pulumi.Config();
const tenantName = demo.require("tenantName");

const organization = new dmarc.Organization("tenant", { name: tenantName });

const group = new dmarc.DomainGroup("tenant-main", {
  organizationId: organization.organizationId,
  name: "Main domains",
});

const webhook = new dmarc.Webhook("tenant-events", {
  name: `${tenantName} events`,
  url: demo.require("webhookUrl"),
  events: ["domain.created", "domain.verified", "report.received"],
});

// After the webhook, so its domain.created event has somewhere to go.
const domain = new dmarc.Domain(
  "tenant-domain",
  { organizationId: organization.organizationId, domain: demo.require("domain"), groupId: group.groupId },
  { dependsOn: [webhook] },
);

// The DNS step: the record goes to the zone's primary server by RFC 2136
// dynamic update, signed with a TSIG key (BIND, Knot, PowerDNS, or here the
// emulator's zone); a DNS provider's record resource (cloudflare.DnsRecord,
// aws.route53.Record, ...) could stand here instead. Without dnsServer the
// record is published by hand at the DNS server the emulator resolves through.
const dnsServer = demo.get("dnsServer");
const record = dnsServer
  ? new dmarc.Rfc2136Record("tenant-dmarc-record", {
      server: dnsServer,
      name: domain.setupRecord.host,
      type: domain.setupRecord.recordType,
      value: domain.setupRecord.value,
      keyName: demo.require("dnsKeyName"),
      keyAlgorithm: demo.require("dnsKeyAlgorithm"),
      keySecret: demo.requireSecret("dnsKeySecret"),
    })
  : undefined;
if (!record) {
  domain.setupRecord.apply((setup) =>
    pulumi.log.info(`publish ${setup.host}. IN ${setup.recordType} "${setup.value}" at your DNS server now`, domain),
  );
}

// `up` ends once the service has verified the record, or fails saying why.
const verification = new dmarc.DomainVerification("tenant-domain-verified", {
  domainId: domain.id,
  recordValue: record ? record.value : domain.setupRecord.value,
  timeout: demo.require("verificationTimeout"),
  pollInterval: "1s",
});

const admin = new dmarc.Invitation("tenant-admin", {
  organizationId: organization.organizationId,
  email: demo.require("adminEmail"),
});

const subscription = new dmarc.Subscription("tenant-plan", {
  organizationId: organization.organizationId,
  priceId: dmarc.getPriceId({
    plan: demo.require("plan"),
    frequency: demo.require("frequency") as dmarc.BillingFrequency,
  }),
});

const signInLink = dmarc.createMagicLink({
  userId: admin.email,
  organizationId: organization.organizationId,
  redirectUri: demo.require("dashboardUrl"),
});

export const organizationId = organization.organizationId;
/** The DMARC record to publish: feed it to a DNS provider (see examples/cloudflare and examples/route53). */
export const dmarcRecord = domain.setupRecord;
export const domainVerified = verification.verified;
export const webhookId = webhook.webhookId;
export const webhookSecret = webhook.secret;
export const subscriptionId = subscription.subscriptionId;
export const subscriptionStatus = subscription.status;
export const subscriptionExpires = subscription.expireDate;
export const adminUserId = admin.userId;
export const adminSignInLink = signInLink;
