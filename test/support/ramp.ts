import * as pulumi from "@pulumi/pulumi";
import { type DnsSetupRecord, Rfc2136Record } from "pulumi-dmarc-partner";
import type { RunningDnsServer } from "./dnsServers";

// What the policy ramp's end-to-end tests share: the senders whose reports
// the emulator generates, and a program's records published to a test's
// DNS server by RFC 2136.

/** The emulator's report profiles of the kinds of sender the ramp meets. */
export const SENDER_PROFILES = {
  clean: { messagesPerDay: 300, spfPassRate: 99, dkimPassRate: 99.5 },
  // Forwarders break SPF; DKIM survives them, so DMARC still passes.
  forwarding: {
    messagesPerDay: 250,
    spfPassRate: 82,
    dkimPassRate: 98.8,
    reportTypeShares: { "dmarc-capable": 68, forwarded: 30, "non-compliant": 2 },
  },
  low: { messagesPerDay: 20, spfPassRate: 100, dkimPassRate: 100 },
  misconfigured: { messagesPerDay: 400, spfPassRate: 72, dkimPassRate: 64 },
  degrading: { messagesPerDay: 300, spfPassRate: 99, dkimPassRate: 99.5 },
};

/** What a degrading sender's reports fall to. */
export const DEGRADED = { messagesPerDay: 300, spfPassRate: 70, dkimPassRate: 62 };

/** Publishes a domain's record to `dns` with its TSIG key: what a program's publishRecord hook makes. */
export function rfc2136Publisher(dns: RunningDnsServer) {
  return (name: string, record: pulumi.Output<DnsSetupRecord>, opts?: pulumi.CustomResourceOptions) =>
    new Rfc2136Record(
      `${name}/dns-record`,
      {
        server: dns.address,
        name: record.host,
        type: record.recordType,
        value: record.value,
        ttl: 300,
        keyName: dns.key.name,
        keySecret: pulumi.secret(dns.key.secret),
      },
      opts,
    );
}
