import * as pulumi from "@pulumi/pulumi";
import * as dmarc from "pulumi-dmarc-partner";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dnsServersUnavailable, type RunningDnsServer, startDnsServer, ZONE } from "../support/dnsServers";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { createTestStack } from "../support/engine";
import { rfc2136Publisher } from "../support/ramp";

// End to end through a real DNS server: Rfc2136Record publishes a Domain's
// setup record to BIND, and the emulator, resolving through BIND, verifies
// the domain, so `up` ends with DomainVerification done. What is verified is
// what is published: a Tenant's domain with `verify` and a `policy` has its
// DomainVerification given the staged record, not the service's `p=none`
// setup value, so a move of the stage makes it wait for the service again.

const unavailable = await dnsServersUnavailable();
if (unavailable) console.warn(`Skipping the verification through BIND: ${unavailable}`);

describe.skipIf(unavailable !== undefined)("a domain verified through BIND", () => {
  let dns: RunningDnsServer;
  let handle: EmulatorHandle;

  beforeAll(async () => {
    dns = await startDnsServer("bind");
    handle = await startTestEmulator({ dns: { resolver: dns.address, checkIntervalMs: 100 } });
  });

  afterAll(async () => {
    await handle?.emulator.close();
    await dns?.stop();
  });

  it("publishes the setup record by RFC 2136 and ends verified", async () => {
    const stack = await createTestStack({
      projectName: "rfc2136-verification",
      config: handle.stackConfig,
      program: async () => {
        const organization = new dmarc.Organization("org", { name: "Acme through BIND" });
        const group = new dmarc.DomainGroup("group", { organizationId: organization.organizationId, name: "main" });
        const domain = new dmarc.Domain("domain", {
          organizationId: organization.organizationId,
          domain: ZONE,
          groupId: group.groupId,
        });
        const record = new dmarc.Rfc2136Record("record", {
          server: dns.address,
          name: domain.setupRecord.host,
          type: domain.setupRecord.recordType,
          value: domain.setupRecord.value,
          keyName: dns.key.name,
          keySecret: dns.key.secret,
        });
        const verification = new dmarc.DomainVerification("verification", {
          domainId: domain.id,
          recordValue: record.value,
          timeout: "2m",
          pollInterval: "1s",
        });
        return { verified: verification.verified, value: domain.setupRecord.value };
      },
    });
    try {
      const up = await stack.up();
      expect(up.outputs.verified?.value).toBe(true);
      expect(await dns.served(`_dmarc.${ZONE}`)).toEqual([`TXT ${up.outputs.value?.value} @3600`]);
      await stack.destroy();
      expect(await dns.served(`_dmarc.${ZONE}`)).toEqual([]);
    } finally {
      await stack.workspace.removeStack(stack.name, { force: true });
    }
  }, 300_000);

  it("verifies a Tenant's domain at quarantine-25 with the record BIND serves, and again after a move", async () => {
    const publish = rfc2136Publisher(dns);
    const stack = await createTestStack({
      projectName: "staged-verification",
      config: { ...handle.stackConfig, "ramp:stage": { value: "quarantine-25" } },
      program: async () => {
        const stage = new pulumi.Config("ramp").require("stage");
        const tenant = new dmarc.Tenant("acme", {
          name: "Acme",
          group: "Production",
          subscription: "none",
          domains: [{ name: ZONE, verify: true, policy: { target: "reject", stage } }],
          publishRecord: (record, _domain, opts, name) => publish(name, record, opts),
        });
        const verification = tenant.domains[ZONE]?.verification as dmarc.DomainVerification;
        return { record: tenant.records[ZONE], verified: verification.recordValue, policy: verification.policy };
      },
    });
    try {
      const up = await stack.up();
      const record = up.outputs.record?.value as dmarc.DnsSetupRecord;
      expect(record.value).toMatch(/^v=DMARC1; p=quarantine; pct=25; rua=mailto:/);
      expect(await dns.served(record.host)).toEqual([`TXT ${record.value} @300`]);
      expect(up.outputs.verified?.value).toBe(record.value);
      expect(up.outputs.policy?.value).toBe("quarantine");

      await stack.setConfig("ramp:stage", { value: "reject" });
      const moved = await stack.up();
      const republished = moved.outputs.record?.value as dmarc.DnsSetupRecord;
      expect(republished.value).toMatch(/^v=DMARC1; p=reject; rua=mailto:/);
      expect(await dns.served(republished.host)).toEqual([`TXT ${republished.value} @300`]);
      // The record and its verification, nothing else.
      expect(moved.summary.resourceChanges?.update).toBe(2);
      expect(moved.outputs.verified?.value).toBe(republished.value);
      await stack.destroy();
    } finally {
      await stack.workspace.removeStack(stack.name, { force: true });
    }
  }, 400_000);
});
