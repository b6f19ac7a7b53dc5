import * as pulumi from "@pulumi/pulumi";
import type { Stack } from "@pulumi/pulumi/automation";
import { type DnsSetupRecord, Domain, stagedRecord, Tenant } from "pulumi-dmarc-partner";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dnsServersUnavailable, type RunningDnsServer, startDnsServer, ZONE } from "../support/dnsServers";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { createTestStack } from "../support/engine";
import { rfc2136Publisher } from "../support/ramp";

// A program's policy ramp through the real engine, the emulator and BIND: a
// Tenant's domain with a `policy` and a Domain staged by `stagedRecord` each
// publish their record at the stage the stack's configuration gives, every
// other tag of the service's setup value kept; a domain without a ramp keeps
// the setup value; moving a stage in the configuration republishes that
// record alone.

const unavailable = await dnsServersUnavailable();
if (unavailable) console.warn(`Skipping the program's policy ramp: ${unavailable}`);

const [APEX, SHOP, MAIL] = [ZONE, `shop.${ZONE}`, `mail.${ZONE}`];
const otherTags = (value: string) => value.split("; ").filter((tag) => !/^(p|pct|sp)=/.test(tag));

describe.skipIf(unavailable !== undefined)("a program's policy ramp published to BIND", () => {
  let dns: RunningDnsServer;
  let handle: EmulatorHandle;
  let stack: Stack;

  beforeAll(async () => {
    dns = await startDnsServer("bind");
    handle = await startTestEmulator();
    const publish = rfc2136Publisher(dns);
    stack = await createTestStack({
      projectName: "program-ramp",
      config: { ...handle.stackConfig, "ramp:apex": { value: "quarantine-25" }, "ramp:mail": { value: "none" } },
      program: async () => {
        const stages = new pulumi.Config("ramp");
        const acme = new Tenant("acme", {
          name: "Acme",
          group: "Production",
          subscription: "none",
          domains: [
            { name: APEX, policy: { target: "reject", sp: "reject", stage: stages.require("apex") } },
            { name: SHOP },
          ],
          publishRecord: (record, _domain, opts, name) => publish(name, record, opts),
        });
        const mail = new Domain(MAIL, {
          organizationId: acme.organizationId,
          domain: MAIL,
          groupId: acme.group.groupId,
        });
        const record = stagedRecord(MAIL, mail.setupRecord, { target: "reject", stage: stages.require("mail") });
        publish(MAIL, record, { dependsOn: [mail] });
        return { records: acme.records, mail: record };
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

  it("publishes each record at its stage, and a moved stage republishes that record alone", async () => {
    const up = await stack.up();
    const records = up.outputs.records?.value as Record<string, DnsSetupRecord>;
    const setup = (records[SHOP] as DnsSetupRecord).value;
    expect(setup).toMatch(/^v=DMARC1; p=none; rua=mailto:/);
    const apex = records[APEX] as DnsSetupRecord;
    expect(apex.value).toMatch(/^v=DMARC1; p=quarantine; pct=25; sp=reject; rua=mailto:/);
    // The service's reporting address and other tags, which its verification looks for, stay as it gave them.
    expect(otherTags(apex.value)).toEqual(otherTags(setup));
    for (const record of Object.values(records))
      expect(await dns.served(record.host)).toEqual([`TXT ${record.value} @300`]);
    const mail = up.outputs.mail?.value as DnsSetupRecord;
    expect(mail.value).toMatch(/^v=DMARC1; p=none; rua=mailto:/);
    expect(await dns.served(mail.host)).toEqual([`TXT ${mail.value} @300`]);

    await stack.setConfig("ramp:apex", { value: "quarantine" });
    await stack.setConfig("ramp:mail", { value: "quarantine-25" });
    const moved = await stack.up();
    expect(moved.summary.resourceChanges?.update).toBe(2);
    const after = moved.outputs.records?.value as Record<string, DnsSetupRecord>;
    expect(after[APEX]?.value).toMatch(/^v=DMARC1; p=quarantine; sp=reject; rua=mailto:/);
    expect(after[SHOP]?.value).toBe(setup);
    const movedMail = moved.outputs.mail?.value as DnsSetupRecord;
    expect(movedMail.value).toMatch(/^v=DMARC1; p=quarantine; pct=25; rua=mailto:/);
    for (const record of [after[APEX], after[SHOP], movedMail] as DnsSetupRecord[])
      expect(await dns.served(record.host)).toEqual([`TXT ${record.value} @300`]);
  }, 400_000);
});
