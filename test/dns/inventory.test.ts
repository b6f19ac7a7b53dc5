import type { Stack } from "@pulumi/pulumi/automation";
import { declareTenants, parseInventory } from "pulumi-dmarc-partner";
import { createClient } from "pulumi-dmarc-partner/client";
import { removeRecord } from "pulumi-dmarc-partner/dns";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { DMARC_NAMES, dnsServersUnavailable, type RunningDnsServer, startDnsServer, ZONE } from "../support/dnsServers";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { createTestStack } from "../support/engine";

// A tenants inventory whose `dns` section publishes by RFC 2136: the tenants
// declared from it (as dmarc-fleet's shards declare them) publish every
// domain's record to BIND, and `up` ends once the emulator, resolving through
// BIND, has verified both domains (two verifications in one Tenant, which
// once waited for each other for ever); a record removed on the server is
// seen by refresh and put back by up.

const unavailable = await dnsServersUnavailable();
if (unavailable) console.warn(`Skipping the inventory's RFC 2136 publishing: ${unavailable}`);

const SECRET_ENV = "DMARC_TEST_DNS_KEY_SECRET";
const [APEX, SHOP] = [ZONE, `shop.${ZONE}`];

describe.skipIf(unavailable !== undefined)("an inventory publishing by RFC 2136", () => {
  let dns: RunningDnsServer;
  let handle: EmulatorHandle;
  let stack: Stack;

  beforeAll(async () => {
    dns = await startDnsServer("bind");
    handle = await startTestEmulator({ dns: { resolver: dns.address, checkIntervalMs: 100 } });
    process.env[SECRET_ENV] = dns.key.secret;
    const inventory = parseInventory(
      stringify({
        defaults: {
          group: "Production",
          plan: "Starter",
          dns: { rfc2136: { server: dns.address, keyName: dns.key.name, keySecretEnv: SECRET_ENV, ttl: 300 } },
        },
        tenants: [
          {
            name: "Acme",
            domains: [
              { name: APEX, verify: true },
              { name: SHOP, verify: true },
            ],
          },
        ],
      }),
    );
    stack = await createTestStack({
      projectName: "rfc2136-inventory",
      config: handle.stackConfig,
      program: async () => {
        const [acme] = declareTenants(inventory);
        return { records: acme?.records };
      },
    });
  });

  afterAll(async () => {
    delete process.env[SECRET_ENV];
    try {
      await stack?.workspace.removeStack(stack.name, { force: true });
    } finally {
      await handle?.emulator.close();
      await dns?.stop();
    }
  });

  it("publishes every domain's record and waits for both verifications in one up, and up puts back a removed one", async () => {
    const up = await stack.up();
    const records = up.outputs.records?.value as Record<string, { host: string; value: string }>;
    for (const domain of [APEX, SHOP]) {
      const record = records[domain];
      expect(DMARC_NAMES).toContain(record?.host);
      expect(await dns.served(record?.host ?? "")).toEqual([`TXT ${record?.value} @300`]);
    }
    const client = createClient({
      baseUrl: handle.emulator.url,
      clientId: handle.partner.clientId,
      clientSecret: handle.partner.clientSecret,
    });
    const [organization] = await client.listOrganizations();
    const domains = await client.listDomains(organization?.id ?? "");
    expect(domains.map((domain) => [domain.domain, domain.domainVerified]).sort()).toEqual([
      [APEX, true],
      [SHOP, true],
    ]);
    const shop = records[SHOP] as { host: string; value: string };
    await removeRecord(dns.target(dns.adminKey), { zone: ZONE, name: shop.host, type: "TXT", value: shop.value });
    const refresh = await stack.refresh();
    expect(refresh.summary.resourceChanges?.delete).toBe(1);
    const again = await stack.up();
    expect(again.summary.resourceChanges?.create).toBe(1);
    expect(await dns.served(shop.host)).toEqual([`TXT ${shop.value} @300`]);

    await stack.destroy();
    expect(await dns.served(shop.host)).toEqual([]);
  }, 400_000);
});
