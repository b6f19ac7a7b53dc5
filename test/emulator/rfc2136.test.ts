import { dynamicProviderHost } from "pulumi-dmarc-partner";
import { verificationOutcome } from "pulumi-dmarc-partner/api";
import { createClient } from "pulumi-dmarc-partner/client";
import {
  decodeMessage,
  encodeMessage,
  exchange,
  Opcode,
  parseServer,
  putDmarcRecord,
  Rcode,
  RecordClass,
  RecordType,
  requestMessage,
  signedRequest,
  txtData,
  zoneOf,
} from "pulumi-dmarc-partner/dns";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";

// The emulator's simulated zone takes RFC 2136 updates signed with its TSIG
// key: Rfc2136Record publishes a domain's setup record there, and the
// emulator's verification sees it.

const TYPE = "Rfc2136Record";
const KEY = { name: "demo-update", algorithm: "hmac-sha512" as const, secret: Buffer.alloc(64, 9).toString("base64") };
type Props = Record<string, unknown>;

let handle: EmulatorHandle;
let organizationId: string;
const domain = "publish.example";
let setup: { host: string; recordType: "TXT" | "CNAME"; value: string };

function declare(overrides: Props = {}): Props {
  return {
    server: handle.emulator.dnsServer,
    name: setup.host,
    type: setup.recordType,
    value: setup.value,
    keyName: KEY.name,
    keyAlgorithm: KEY.algorithm,
    keySecret: KEY.secret,
    ...overrides,
  };
}

async function create(news: Props) {
  const checked = await dynamicProviderHost.check(TYPE, {}, news);
  if (!checked.inputs) throw new Error(JSON.stringify(checked.failures));
  return dynamicProviderHost.create(TYPE, checked.inputs);
}

function target(secret = KEY.secret, name = KEY.name) {
  const server = parseServer(handle.emulator.dnsServer ?? "");
  if (!server) throw new Error("the emulator serves no zone");
  return { server, key: { name, algorithm: KEY.algorithm, secret: Buffer.from(secret, "base64") } };
}

beforeAll(async () => {
  handle = await startTestEmulator({ dns: { tsigKey: KEY, checkIntervalMs: 60_000 } });
  const client = createClient({
    baseUrl: handle.emulator.url,
    clientId: handle.partner.clientId,
    clientSecret: handle.partner.clientSecret,
  });
  organizationId = (await client.createOrganization({ name: "Publisher" })).id;
  const groupId = (await client.createDomainGroup({ organizationId, name: "G" })).id;
  await client.createDomain({ organizationId, domain, type: "sending", groupId });
  const record = await client.getSetupRecord(organizationId, domain, "TXT");
  setup = { host: record.host, recordType: "TXT", value: record.value };
});

afterAll(async () => {
  await handle?.emulator.close();
});

describe("the emulator's zone under RFC 2136", () => {
  it("exposes the key it takes from its options", () => {
    expect(handle.emulator.dnsKey).toEqual(KEY);
  });

  it("is authoritative for each domain the service knows, which is how the record finds its zone", async () => {
    expect(await zoneOf(target(), setup.host)).toBe(domain);
  });

  it("takes the record from Rfc2136Record, serves it back, and the domain verifies", async () => {
    const created = await create(declare());
    expect(created.outs).toMatchObject({ zoneName: domain, ttl: 3600 });
    const read = await dynamicProviderHost.read(TYPE, created.id, created.outs as Props);
    expect(read.props).toMatchObject({ value: setup.value, ttl: 3600 });
    const verdict = await handle.control<{ verificationStatus: string }>("POST", `/domains/${domain}/verify`, {
      organizationId,
    });
    expect(verificationOutcome(verdict.verificationStatus)).toBe("verified");
    await dynamicProviderHost.delete(TYPE, created.id, created.outs as Props);
    expect(await handle.control<unknown[]>("GET", "/dns/records")).toEqual([]);
  });

  it("takes a long TXT record over TCP", async () => {
    const long = `${setup.value}; ruf=mailto:${"r".repeat(700)}@publish.example`;
    const created = await create(declare({ value: long, ttl: 300 }));
    const records = await handle.control<{ values: string[]; ttl: number }[]>("GET", "/dns/records");
    expect(records).toEqual([{ name: setup.host, type: "TXT", values: [long], ttl: 300 }]);
    await dynamicProviderHost.delete(TYPE, created.id, created.outs as Props);
  });

  it("refuses a wrong secret, an unknown key and an unsigned update, writing nothing", async () => {
    const record = { zone: domain, name: setup.host, type: "TXT" as const, value: setup.value, ttl: 300 };
    await expect(putDmarcRecord(target(Buffer.alloc(64, 1).toString("base64")), record)).rejects.toThrow(
      /answered BADSIG/,
    );
    await expect(putDmarcRecord(target(KEY.secret, "nobody"), record)).rejects.toThrow(/answered BADKEY/);
    const update = { name: setup.host, type: RecordType.TXT, class: RecordClass.IN, ttl: 60, data: txtData("x") };
    const zone = { name: domain, type: RecordType.SOA, class: RecordClass.IN };
    const unsigned = encodeMessage({ ...requestMessage(Opcode.UPDATE, zone, [update]), id: 7 });
    expect(decodeMessage(await exchange(target().server, unsigned)).rcode).toBe(Rcode.REFUSED);
    expect(await handle.control<unknown[]>("GET", "/dns/records")).toEqual([]);
  });

  it("applies updates as BIND does: a third-party TXT stays, a CNAME beside it is refused, a second policy goes", async () => {
    const records = () => handle.control<{ type: string; values: string[] }[]>("GET", "/dns/records");
    const site = "site-verification=abc123";
    await handle.control("PUT", "/dns/records", {
      name: setup.host,
      type: "TXT",
      values: [site, "v=DMARC1; p=reject"],
    });
    const created = await create(declare({ ttl: 300 }));
    expect(await records()).toEqual([expect.objectContaining({ type: "TXT", values: [site, setup.value] })]);
    await expect(create(declare({ type: "CNAME", value: "elsewhere.example" }))).rejects.toThrow(
      /holds other records at the name in zone publish.example: TXT "site-verification=abc123"/,
    );
    await dynamicProviderHost.delete(TYPE, created.id, created.outs as Props);
    expect(await records()).toEqual([expect.objectContaining({ type: "TXT", values: [site] })]);
    await handle.control("DELETE", `/dns/records?name=${setup.host}`);
  });

  it("checks prerequisites (RFC 2136 §3.2) and applies nothing when one fails", async () => {
    const zone = { name: domain, type: RecordType.SOA, class: RecordClass.IN };
    const record = (value: string, recordClass: number = RecordClass.IN) => ({
      name: setup.host,
      type: RecordType.TXT,
      class: recordClass,
      ttl: recordClass === RecordClass.IN ? 60 : 0,
      data: recordClass === RecordClass.NONE && value === "" ? Buffer.alloc(0) : txtData(value),
    });
    const send = async (prerequisites: ReturnType<typeof record>[], updates = [record("added")]) => {
      const message = requestMessage(Opcode.UPDATE, zone, updates, prerequisites);
      return (
        await signedRequest(target(), message, { zone: domain, request: "a guarded update" }, [
          Rcode.NXRRSET,
          Rcode.YXRRSET,
        ])
      ).rcode;
    };
    await handle.control("PUT", "/dns/records", { name: setup.host, type: "TXT", values: ["a", "b"] });
    const asServed = (value: string) => ({ ...record(value), ttl: 0 });
    // The TXT set holds a and b: "exists with exactly a" and "does not exist" fail; "exactly a and b" holds.
    expect(await send([asServed("a")])).toBe(Rcode.NXRRSET);
    expect(await send([record("", RecordClass.NONE)])).toBe(Rcode.YXRRSET);
    const values = async () => (await handle.control<{ values: string[] }[]>("GET", "/dns/records"))[0]?.values;
    expect(await values()).toEqual(["a", "b"]);
    expect(await send([asServed("b"), asServed("a")], [record("a", RecordClass.NONE), record("c")])).toBe(
      Rcode.NOERROR,
    );
    expect(await values()).toEqual(["b", "c"]);
    await handle.control("DELETE", `/dns/records?name=${setup.host}`);
  });

  it("refuses a zone it does not serve", async () => {
    await expect(create(declare({ name: "_dmarc.elsewhere.example", zone: "elsewhere.example" }))).rejects.toThrow(
      /answered NOTAUTH to the update of _dmarc.elsewhere.example \(TXT\) in zone elsewhere.example/,
    );
  });
});
