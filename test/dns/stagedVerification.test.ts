import * as pulumi from "@pulumi/pulumi";
import type { Stack } from "@pulumi/pulumi/automation";
import { type DnsSetupRecord, type DomainVerification, Tenant } from "pulumi-dmarc-partner";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dnsServersUnavailable, type RunningDnsServer, startDnsServer, ZONE } from "../support/dnsServers";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { createTestStack } from "../support/engine";
import { rfc2136Publisher } from "../support/ramp";

// What is verified is what is published: a Tenant's domain with `verify:
// true` and a `policy` publishes its staged record to BIND, and the service
// (the emulator, resolving through BIND) verifies it; the DomainVerification
// is given that staged record, not the service's `p=none` setup value, so a
// move of the stage makes it wait for the service again.

const unavailable = await dnsServersUnavailable();
if (unavailable) console.warn(`Skipping the staged record's verification: ${unavailable}`);

describe.skipIf(unavailable !== undefined)("a domain with a policy, verified through BIND", () => {
  let dns: RunningDnsServer;
  let handle: EmulatorHandle;
  let stack: Stack;

  beforeAll(async () => {
    dns = await startDnsServer("bind");
    handle = await startTestEmulator({ dns: { resolver: dns.address, checkIntervalMs: 100 } });
    const publish = rfc2136Publisher(dns);
    stack = await createTestStack({
      projectName: "staged-verification",
      config: { ...handle.stackConfig, "ramp:stage": { value: "quarantine-25" } },
      program: async () => {
        const tenant = new Tenant("acme", {
          name: "Acme",
          group: "Production",
          subscription: "none",
          domains: [
            {
              name: ZONE,
              verify: true,
              policy: { target: "reject", stage: new pulumi.Config("ramp").require("stage") },
            },
          ],
          publishRecord: (record, _domain, opts, name) => publish(name, record, opts),
        });
        const verification = tenant.domains[ZONE]?.verification as DomainVerification;
        return { record: tenant.records[ZONE], verified: verification.recordValue, policy: verification.policy };
      },
    });
  }, 120_000);

  afterAll(async () => {
    try {
      await stack?.workspace.removeStack(stack.name, { force: true });
    } finally {
      await handle?.emulator.close();
      await dns?.stop();
    }
  });

  it("verifies the record BIND serves at quarantine-25, and waits again for the record a move publishes", async () => {
    const up = await stack.up();
    const record = up.outputs.record?.value as DnsSetupRecord;
    expect(record.value).toMatch(/^v=DMARC1; p=quarantine; pct=25; rua=mailto:/);
    expect(await dns.served(record.host)).toEqual([`TXT ${record.value} @300`]);
    expect(up.outputs.verified?.value).toBe(record.value);
    expect(up.outputs.policy?.value).toBe("quarantine");

    await stack.setConfig("ramp:stage", { value: "reject" });
    const moved = await stack.up();
    const republished = moved.outputs.record?.value as DnsSetupRecord;
    expect(republished.value).toMatch(/^v=DMARC1; p=reject; rua=mailto:/);
    expect(await dns.served(republished.host)).toEqual([`TXT ${republished.value} @300`]);
    // The record and its verification, nothing else.
    expect(moved.summary.resourceChanges?.update).toBe(2);
    expect(moved.outputs.verified?.value).toBe(republished.value);
  }, 400_000);
});
