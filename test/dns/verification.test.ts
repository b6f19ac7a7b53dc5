import * as dmarc from "pulumi-dmarc-partner";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dnsServersUnavailable, type RunningDnsServer, startDnsServer, ZONE } from "../support/dnsServers";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { createTestStack } from "../support/engine";

// End to end through a real DNS server: Rfc2136Record publishes a Domain's
// setup record to BIND, and the emulator, resolving through BIND, verifies
// the domain, so `up` ends with DomainVerification done.

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
});
