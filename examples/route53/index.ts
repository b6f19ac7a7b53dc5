// A customer organisation with one domain whose DMARC record is published in
// an Amazon Route 53 hosted zone: the record follows the Domain's setup
// record, so nobody copies the policy text by hand.
import * as pulumi from "@pulumi/pulumi";
import * as dmarc from "pulumi-dmarc-partner";
import { publishDmarcRecord } from "./dmarcRecord";

const config = new pulumi.Config();

const organization = new dmarc.Organization("customer", {
  name: config.get("organization") ?? "Example Customer",
});

const group = new dmarc.DomainGroup("customer-domains", {
  organizationId: organization.organizationId,
  name: "Production",
});

const domain = new dmarc.Domain("customer-domain", {
  organizationId: organization.organizationId,
  domain: config.require("domain"),
  groupId: group.groupId,
  setupRecordType: config.get<"TXT" | "CNAME">("recordType", { allowedValues: ["TXT", "CNAME"] }) ?? "TXT",
});

const record = publishDmarcRecord("customer-dmarc", domain, config.require("hostedZoneId"));

// `up` ends once the service has found the record, or fails with its reason.
// The record's value is an input, so the verification comes after the record
// and waits again whenever the published value changes.
const verification = new dmarc.DomainVerification("customer-domain-verified", {
  domainId: domain.id,
  recordValue: record.records.apply((records) => (records ?? []).join(" ")),
  timeout: config.get("verificationTimeout") ?? "45m",
});

export const organizationId = organization.organizationId;
export const dmarcRecord = { name: record.fqdn, type: record.type, records: record.records };
/** True: `up` ends once the service has verified the record; `pulumi refresh` reads it again. */
export const verified = verification.verified;
