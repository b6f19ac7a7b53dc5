import type { Stack } from "@pulumi/pulumi/automation";
import * as dmarc from "pulumi-dmarc-partner";
import { removeRecord } from "pulumi-dmarc-partner/dns";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DMARC_NAMES, dnsServersUnavailable, type RunningDnsServer, startDnsServer, ZONE } from "../support/dnsServers";
import { createTestStack, storedState } from "../support/engine";

// Rfc2136Record through the real engine against BIND, in a stack with no
// dmarc:* settings: up, refresh after a removal made outside, up puts it
// back, destroy leaves nothing; the key's secret appears in no output and in
// no state.

const unavailable = await dnsServersUnavailable();
if (unavailable) console.warn(`Skipping the RFC 2136 engine test: ${unavailable}`);

const NAME = DMARC_NAMES[0] as string;
const VALUE = "v=DMARC1; p=none; rua=mailto:dmarc@acme.example";

describe.skipIf(unavailable !== undefined)("Rfc2136Record through the engine", () => {
  let dns: RunningDnsServer;
  let stack: Stack;
  const output: string[] = [];
  const onOutput = (line: string) => output.push(line);

  beforeAll(async () => {
    dns = await startDnsServer("bind", "hmac-sha512");
    stack = await createTestStack({
      projectName: "rfc2136-record",
      program: async () => {
        const record = new dmarc.Rfc2136Record("acme-dmarc", {
          server: dns.address,
          name: NAME,
          type: "TXT",
          value: VALUE,
          ttl: 300,
          keyName: dns.key.name,
          keyAlgorithm: "hmac-sha512",
          keySecret: dns.key.secret,
        });
        return { zone: record.zoneName, keySecret: record.keySecret };
      },
    });
  });

  afterAll(async () => {
    await stack?.workspace.removeStack(stack.name, { force: true });
    await dns?.stop();
  });

  it("publishes, sees a removal made outside, puts the record back and removes it on destroy", async () => {
    const up = await stack.up({ onOutput });
    expect(up.summary.resourceChanges).toEqual({ create: 2 });
    expect(up.outputs.zone?.value).toBe(ZONE);
    expect(up.outputs.keySecret?.secret).toBe(true);
    expect(await dns.served(NAME)).toEqual([`TXT ${VALUE} @300`]);

    await removeRecord(dns.target(dns.adminKey), { zone: ZONE, name: NAME, type: "TXT", value: VALUE });
    const refresh = await stack.refresh({ onOutput });
    expect(refresh.summary.resourceChanges?.delete).toBe(1);
    const again = await stack.up({ onOutput });
    expect(again.summary.resourceChanges?.create).toBe(1);
    expect(await dns.served(NAME)).toEqual([`TXT ${VALUE} @300`]);

    const state = await storedState(stack);
    expect(state).toContain(NAME);
    expect(state).not.toContain(dns.key.secret);

    await stack.destroy({ onOutput });
    expect(await dns.served(NAME)).toEqual([]);
    expect(output.join("")).not.toContain(dns.key.secret);
  }, 300_000);
});
