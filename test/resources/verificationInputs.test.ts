import { dynamicProviderHost as host } from "pulumi-dmarc-partner";
import { createClient, type DmarcClient } from "pulumi-dmarc-partner/client";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { UNKNOWN } from "../../provider/src/runtime/values";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";

// DomainVerification through the provider functions its shim calls, against
// an in-process emulator: input checks (no request is sent) and the quick
// lifecycle cases. The engine's view is in verification.test.ts.

const TYPE = "DomainVerification";

type Props = Record<string, unknown>;

let handle: EmulatorHandle;
let client: DmarcClient;

beforeAll(async () => {
  // DNS checked more often than the resource reads (pollInterval 1s), but not
  // at once: a verdict on a record just replaced stays visible for a moment.
  handle = await startTestEmulator({ dns: { checkIntervalMs: 700 } });
  client = createClient({
    baseUrl: handle.emulator.url,
    clientId: handle.partner.clientId,
    clientSecret: handle.partner.clientSecret,
  });
  const values: Record<string, string> = {
    "dmarc:baseUrl": handle.emulator.url,
    "dmarc:clientId": handle.partner.clientId,
    "dmarc:clientSecret": handle.partner.clientSecret,
    "dmarc:partnerId": handle.partner.id,
  };
  await host.configure({
    config: {
      get: (key: string) => values[key],
      require: (key: string) => values[key] ?? "",
    },
  });
});

afterAll(async () => {
  await handle?.emulator.close();
});

beforeEach(async () => {
  await handle.control("POST", "/reset");
});

async function checked(news: Props): Promise<Props> {
  const result = await host.check(TYPE, {}, news);
  expect(result.failures ?? []).toEqual([]);
  return result.inputs as Props;
}

/** An organisation with one domain, and its setup record. */
async function domainOf(name: string): Promise<{ organizationId: string; domain: string; value: string }> {
  const organization = await client.createOrganization({ name: `Org of ${name}` });
  const group = await client.createDomainGroup({ organizationId: organization.id, name: "main" });
  await client.createDomain({ organizationId: organization.id, domain: name, type: "sending", groupId: group.id });
  const record = await client.getSetupRecord(organization.id, name, "TXT");
  return { organizationId: organization.id, domain: name, value: record.value };
}

function publish(domain: string, value: string): Promise<unknown> {
  return handle.control("PUT", "/dns/records", { name: `_dmarc.${domain}`, type: "TXT", values: [value] });
}

describe("DomainVerification inputs", () => {
  it("takes the Domain's id or organisation and domain, with the documented defaults", async () => {
    expect(await checked({ domainId: "org_1/acme.example" })).toEqual({
      domainId: "org_1/acme.example",
      timeout: "45m",
      pollInterval: "15s",
    });
    expect(await checked({ organizationId: "org_1", domain: "acme.example", timeout: "1h30m" })).toMatchObject({
      timeout: "1h30m",
    });
  });

  const badInputs: [string, Props, string, string][] = [
    ["a domain id without organisation", { domainId: "acme.example" }, "domainId", '"<organizationId>/<domain>"'],
    ["no domain at all", {}, "organizationId", "unless domainId"],
    ["no domain at all", {}, "domain", "unless domainId"],
    ["an organisation without domain", { organizationId: "org_1" }, "domain", "unless domainId"],
    ["both ways at once", { domainId: "org_1/a.example", domain: "a.example" }, "domainId", "not both"],
    ["an upper-case domain", { organizationId: "org_1", domain: "A.example" }, "domain", "lower-case domain"],
    ["a timeout in words", { domainId: "org_1/a.example", timeout: "45 minutes" }, "timeout", '"45m"'],
    ["a timeout in bare seconds", { domainId: "org_1/a.example", timeout: "90" }, "timeout", '"90s"'],
    ["a timeout of days", { domainId: "org_1/a.example", timeout: "48h" }, "timeout", "between 1s and 24h"],
    ["a zero poll interval", { domainId: "org_1/a.example", pollInterval: "0s" }, "pollInterval", "between 1s and"],
    ["a numeric poll interval", { domainId: "org_1/a.example", pollInterval: 5 }, "pollInterval", "expected string"],
  ];

  it.each(badInputs)("refuses %s: %j at %s", async (_case, news, field, expected) => {
    const before = await handle.control<{ requests: number }>("GET", "/stats");
    const result = await host.check(TYPE, {}, news);
    const failure = result.failures?.find((candidate) => candidate.reason.includes(`input "${field}"`));
    expect(failure, JSON.stringify(result.failures)).toBeDefined();
    expect(failure?.reason).toContain(`${TYPE} input "${field}"`);
    expect(failure?.reason).toContain(expected);
    expect(failure?.reason).toContain("got ");
    const after = await handle.control<{ requests: number }>("GET", "/stats");
    expect(after.requests).toBe(before.requests);
  });

  it("lets a domain id unknown during preview through", async () => {
    const result = await host.check(TYPE, {}, { domainId: UNKNOWN, timeout: "10m" });
    expect(result.failures ?? []).toEqual([]);
  });
});

describe("DomainVerification lifecycle", () => {
  it("creates at once for a verified domain; read reports it; delete leaves the domain alone", async () => {
    const target = await domainOf("verified.example");
    await publish(target.domain, target.value);
    await handle.control("POST", `/domains/${target.domain}/verify`, { organizationId: target.organizationId });

    const created = await host.create(TYPE, await checked({ domainId: `${target.organizationId}/${target.domain}` }));
    expect(created.id).toBe(`${target.organizationId}/${target.domain}`);
    expect(created.outs).toMatchObject({ verified: true, policy: "none" });

    const read = await host.read(TYPE, created.id, created.outs);
    expect(read.props).toMatchObject({ verified: true, domainId: `${target.organizationId}/${target.domain}` });

    await host.delete(TYPE, created.id, created.outs);
    expect(await client.getDomain(target.organizationId, target.domain)).toMatchObject({ domainVerified: true });
  });

  it("read drops the verification once the domain is gone", async () => {
    const target = await domainOf("gone.example");
    await client.deleteDomain(target.organizationId, target.domain);
    expect(await host.read(TYPE, `${target.organizationId}/${target.domain}`, undefined)).toEqual({});
  });

  it("times out saying how long it waited and what it saw, without writing to the service", async () => {
    const target = await domainOf("silent.example");
    const inputs = await checked({ ...target, value: undefined, timeout: "2s", pollInterval: "1s" });
    const before = await handle.control<{ byRoute: Record<string, number> }>("GET", "/stats");
    await expect(host.create(TYPE, inputs)).rejects.toThrow(
      /silent\.example was not verified within 2s \(waited 2 s\); last seen: no DMARC record at _dmarc\.silent\.example seen yet\..*run pulumi up again to keep waiting/,
    );
    const after = await handle.control<{ byRoute: Record<string, number> }>("GET", "/stats");
    const writes = Object.entries(after.byRoute).filter(
      ([route, count]) =>
        !route.startsWith("GET ") && !route.startsWith("POST /auth") && count !== before.byRoute[route],
    );
    expect(writes).toEqual([]);
  });

  it("fails on a record the service rejects, saying what to publish", async () => {
    const target = await domainOf("norua.example");
    await publish(target.domain, "v=DMARC1; p=reject; rua=mailto:reports@norua.example");
    const inputs = await checked({ ...target, value: undefined, timeout: "1m", pollInterval: "1s" });
    await expect(host.create(TYPE, inputs)).rejects.toThrow(
      /did not verify norua\.example: a DMARC record at _dmarc\.norua\.example \(p=reject\) without the service's rua=mailto address\. Publish the Domain's setupRecord\.value/,
    );
  });

  it("does not take the verdict on a record replaced just before the wait for the verdict on the new one", async () => {
    const target = await domainOf("corrected.example");
    await publish(target.domain, "v=DMARC1; p=none");
    const verdict = await handle.control("POST", `/domains/${target.domain}/verify`, {
      organizationId: target.organizationId,
    });
    expect(verdict).toEqual({ verificationStatus: "failed", reason: "RUA address not found" });
    await publish(target.domain, target.value);
    const inputs = await checked({ ...target, value: undefined, timeout: "1m", pollInterval: "1s" });
    expect((await host.create(TYPE, inputs)).outs).toMatchObject({ verified: true });
  });

  it("update waits again only for a new record value", async () => {
    const target = await domainOf("changed.example");
    const olds = {
      ...(await checked({ ...target, value: undefined, recordValue: "old", timeout: "2s", pollInterval: "1s" })),
      verified: true,
      policy: "none",
    };
    const id = `${target.organizationId}/${target.domain}`;
    const sameValue = await checked({ ...target, value: undefined, recordValue: "old", timeout: "5s" });
    expect((await host.update(TYPE, id, olds, sameValue)).outs).toMatchObject({ verified: true, timeout: "5s" });
    const newValue = await checked({ ...target, value: undefined, recordValue: "new", timeout: "2s" });
    await expect(host.update(TYPE, id, olds, newValue)).rejects.toThrow(/was not verified within 2s/);
  });

  it("fails when the domain is not in the organisation", async () => {
    const target = await domainOf("present.example");
    const inputs = await checked({ organizationId: target.organizationId, domain: "absent.example", timeout: "1m" });
    await expect(host.create(TYPE, inputs)).rejects.toThrow(/absent\.example is not in organisation/);
  });
});
