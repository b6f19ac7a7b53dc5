import type { RunningEmulator } from "dmarc-partner-emulator";
import { Domain, DomainGroup, DomainVerifiedEvent, Organization, SetupRecord } from "pulumi-dmarc-partner/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ApiCaller,
  control,
  type Receiver,
  startDnsServer,
  startReceiver,
  startTestEmulator,
  type TestDnsServer,
  type TestEmulator,
  waitFor,
} from "./helpers";

const WINDOW_MS = 800;

interface Fixture {
  t: TestEmulator;
  receiver: Receiver;
  organizationId: string;
  groupId: string;
}

async function fixture(t: TestEmulator): Promise<Fixture> {
  const receiver = await startReceiver();
  const organizationId = (
    await t.alpha.call("POST", "/v1/organizations", { body: { name: "V" }, schema: Organization })
  ).body.id;
  const groupId = (
    await t.alpha.call("POST", "/v1/domain-groups", { body: { organizationId, name: "G" }, schema: DomainGroup })
  ).body.id;
  await t.alpha.call("POST", "/v1/webhooks", {
    body: { name: "v", ownerId: organizationId, url: receiver.url, events: ["domain.verified"] },
  });
  return { t, receiver, organizationId, groupId };
}

async function addDomain({ t, organizationId, groupId }: Fixture, domain: string, type = "TXT") {
  await t.alpha.call("POST", "/v1/domains", { body: { organizationId, domain, type: "sending", groupId } });
  const setup = await t.alpha.call("GET", `/v1/domains/${domain}/setup`, {
    query: { type, organizationId },
    schema: SetupRecord,
  });
  return setup.body;
}

function verificationOf({ receiver }: Fixture, domain: string) {
  return waitFor(`domain.verified for ${domain}`, () => {
    const event = receiver.received
      .map((request) => DomainVerifiedEvent.parse(JSON.parse(request.body)))
      .find((candidate) => candidate.data.domain === domain);
    return event?.data;
  });
}

async function domainState(api: ApiCaller, organizationId: string, domain: string) {
  return (await api.call("GET", `/v1/domains/${domain}`, { query: { organizationId }, schema: Domain })).body;
}

function verifyNow(emulator: RunningEmulator, organizationId: string, domain: string) {
  return control<{ verificationStatus: string; reason?: string }>(emulator, "POST", `/domains/${domain}/verify`, {
    organizationId,
  });
}

describe("verification against a real DNS server on loopback", () => {
  let dns: TestDnsServer;
  let f: Fixture;

  beforeAll(async () => {
    dns = await startDnsServer();
    const t = await startTestEmulator({ dns: { resolver: dns.address, checkIntervalMs: 50, windowMs: WINDOW_MS } });
    expect(t.emulator.dnsServer).toBeUndefined();
    f = await fixture(t);
  });

  afterAll(async () => {
    await f.t.close();
    await f.receiver.close();
    await dns.close();
  });

  it("succeeds when the published record carries the organisation's rua", async () => {
    const setup = await addDomain(f, "good.example");
    dns.setTxt(setup.host, ["google-site-verification=abc", setup.value]);
    expect(await verificationOf(f, "good.example")).toEqual({ domain: "good.example", verificationStatus: "success" });
    expect(dns.queries).toContain("TXT _dmarc.good.example");
    expect(await domainState(f.t.alpha, f.organizationId, "good.example")).toMatchObject({
      domainVerified: true,
      policy: "none",
    });
  });

  it("fails with 'RUA address not found' for a DMARC record without the service's rua", async () => {
    const setup = await addDomain(f, "norua.example");
    dns.setTxt(setup.host, ["v=DMARC1; p=reject; rua=mailto:dmarc@elsewhere.example"]);
    expect(await verificationOf(f, "norua.example")).toEqual({
      domain: "norua.example",
      verificationStatus: "failed",
      reason: "RUA address not found",
    });
    expect(await domainState(f.t.alpha, f.organizationId, "norua.example")).toMatchObject({
      domainVerified: false,
      policy: "reject",
    });
  });

  it("fails when no record appears within the window", async () => {
    // The window opens when the service adds the domain, so the clock starts before the request is sent.
    const started = Date.now();
    await addDomain(f, "silent.example");
    const result = await verificationOf(f, "silent.example");
    expect(Date.now() - started).toBeGreaterThanOrEqual(WINDOW_MS - 100);
    expect(result).toEqual({
      domain: "silent.example",
      verificationStatus: "failed",
      reason: `no DMARC record found at _dmarc.silent.example within ${WINDOW_MS} ms`,
    });
  });

  it("verifies on demand through the control plane", async () => {
    const setup = await addDomain(f, "ondemand.example");
    dns.setTxt(setup.host, ["v=DMARC1; p=quarantine"]);
    const failed = await verifyNow(f.t.emulator, f.organizationId, "ondemand.example");
    expect(failed.body).toEqual({ verificationStatus: "failed", reason: "RUA address not found" });
    dns.setTxt(setup.host, [setup.value]);
    const succeeded = await verifyNow(f.t.emulator, f.organizationId, "ondemand.example");
    expect(succeeded).toEqual({ status: 200, body: { verificationStatus: "success" } });
  });
});

describe("verification against the simulated zone", () => {
  let f: Fixture;

  beforeAll(async () => {
    const t = await startTestEmulator({ dns: { checkIntervalMs: 50, windowMs: WINDOW_MS } });
    expect(t.emulator.dnsServer).toMatch(/^127\.0\.0\.1:\d+$/);
    f = await fixture(t);
  });

  afterAll(async () => {
    await f.t.close();
    await f.receiver.close();
  });

  const publish = (name: string, type: "TXT" | "CNAME", values: string[]) =>
    control(f.t.emulator, "PUT", "/dns/records", { name, type, values });

  it("succeeds for a TXT record published through the control plane", async () => {
    const setup = await addDomain(f, "zone-good.example");
    expect((await publish(setup.host, "TXT", [setup.value])).status).toBe(204);
    expect(await verificationOf(f, "zone-good.example")).toEqual({
      domain: "zone-good.example",
      verificationStatus: "success",
    });
    const listed = await control<Array<{ name: string }>>(f.t.emulator, "GET", "/dns/records");
    expect(listed.body.map((record) => record.name)).toContain("_dmarc.zone-good.example");
  });

  it("succeeds for a CNAME to the host the setup record names", async () => {
    const setup = await addDomain(f, "zone-cname.example", "CNAME");
    expect(setup.type).toBe("cname");
    await publish(setup.host, "CNAME", [setup.value]);
    expect(await verificationOf(f, "zone-cname.example")).toMatchObject({ verificationStatus: "success" });
  });

  it("fails with 'RUA address not found' without the service's rua", async () => {
    const setup = await addDomain(f, "zone-norua.example");
    await publish(setup.host, "TXT", ["v=DMARC1; p=none; rua=mailto:x@other.example"]);
    expect(await verificationOf(f, "zone-norua.example")).toEqual({
      domain: "zone-norua.example",
      verificationStatus: "failed",
      reason: "RUA address not found",
    });
  });

  it("fails when no record appears within the window, also after a record is removed", async () => {
    const setup = await addDomain(f, "zone-silent.example");
    await publish(setup.host, "TXT", ["not dmarc"]);
    expect((await control(f.t.emulator, "DELETE", `/dns/records?name=${setup.host}`)).status).toBe(204);
    expect(await verificationOf(f, "zone-silent.example")).toEqual({
      domain: "zone-silent.example",
      verificationStatus: "failed",
      reason: `no DMARC record found at _dmarc.zone-silent.example within ${WINDOW_MS} ms`,
    });
  });

  it("refuses zone records with invalid names", async () => {
    const refused = await publish("bad name!", "TXT", ["x"]);
    expect(refused.status).toBe(400);
    expect((refused.body as { details: { invalidFields: Array<{ field: string }> } }).details.invalidFields).toEqual([
      expect.objectContaining({ field: "name" }),
    ]);
  });
});
