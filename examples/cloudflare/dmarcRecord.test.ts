import * as pulumi from "@pulumi/pulumi";
import { type DnsSetupRecord, Domain } from "pulumi-dmarc-partner";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { publishDmarcRecord, txtContent } from "./dmarcRecord";

// The Cloudflare provider's plugin cannot run here, so Pulumi's mocks stand in
// for every provider: the Domain answers a made-up setup record, and the
// test reads what the program asked Cloudflare for.

const DMARC = "pulumi-nodejs:dynamic/dmarc";
const RECORD_TYPE = "cloudflare:index/dnsRecord:DnsRecord";

const declared: pulumi.runtime.MockResourceArgs[] = [];
let setupRecord: DnsSetupRecord;

/**
 * What the service would answer for the package's resources: the id, which
 * some outputs derive from (`organizationId`, `groupId`), and outputs beyond the inputs.
 */
const service: Record<string, (inputs: Record<string, string>) => { id: string; outputs?: Record<string, unknown> }> = {
  [`${DMARC}:Organization`]: () => ({ id: "org_1" }),
  [`${DMARC}:DomainGroup`]: (inputs) => ({ id: `${inputs.organizationId}/g_1` }),
  [`${DMARC}:Domain`]: (inputs) => ({
    id: `${inputs.organizationId}/${inputs.domain}`,
    outputs: { setupRecord, verified: false },
  }),
  [`${DMARC}:DomainVerification`]: (inputs) => ({
    id: String(inputs.domainId),
    outputs: { verified: true, policy: "none" },
  }),
};

beforeAll(() => {
  pulumi.runtime.setMocks(
    {
      newResource(args) {
        declared.push(args);
        const answer = service[args.type]?.(args.inputs) ?? { id: `${args.name}-id` };
        return { id: answer.id, state: { ...args.inputs, ...answer.outputs } };
      },
      call(args) {
        return args.inputs;
      },
    },
    "dmarc-cloudflare-example",
    "test",
    false,
  );
});

beforeEach(() => {
  declared.length = 0;
});

function settled<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => output.apply(resolve));
}

function inputsOf(type: string): Record<string, unknown> {
  const inputs = declared.find((args) => args.type === type)?.inputs;
  expect(inputs, `a ${type} is declared`).toBeDefined();
  return inputs as Record<string, unknown>;
}

/** Declares a Domain whose service answers `record`, publishes it, and returns the inputs Cloudflare was given. */
async function publish(record: DnsSetupRecord): Promise<Record<string, unknown>> {
  setupRecord = record;
  const name = `domain-${declared.length}`;
  const domain = new Domain(name, { organizationId: "org_1", domain: "mail.example.org", groupId: "g_1" });
  await settled(publishDmarcRecord(`${name}-dmarc`, domain, "zone-123").id);
  return inputsOf(RECORD_TYPE);
}

const txtRecord: DnsSetupRecord = {
  host: "_dmarc.mail.example.org",
  name: "_dmarc.mail",
  zone: "example.org",
  type: "txt",
  recordType: "TXT",
  value: "v=DMARC1; p=none; rua=mailto:org_1@rua.service.test; fo=1",
};

describe("publishDmarcRecord", () => {
  it("publishes the TXT record at the setup record's host, quoted as Cloudflare wants", async () => {
    const inputs = await publish(txtRecord);
    expect(inputs).toMatchObject({
      zoneId: "zone-123",
      name: "_dmarc.mail.example.org",
      type: "TXT",
      content: '"v=DMARC1; p=none; rua=mailto:org_1@rua.service.test; fo=1"',
      proxied: false,
      ttl: 3600,
    });
  });

  it("publishes a CNAME record's target as it is", async () => {
    const inputs = await publish({
      ...txtRecord,
      type: "cname",
      recordType: "CNAME",
      value: "mail.example.org.org-1.records.service.test",
    });
    expect(inputs).toMatchObject({
      name: "_dmarc.mail.example.org",
      type: "CNAME",
      content: "mail.example.org.org-1.records.service.test",
      proxied: false,
    });
  });

  it("follows the Domain's record: another value from the service is another content", async () => {
    const inputs = await publish({ ...txtRecord, host: "_dmarc.example.net", value: "v=DMARC1; p=reject" });
    expect(inputs).toMatchObject({ name: "_dmarc.example.net", content: '"v=DMARC1; p=reject"' });
  });

  it("takes the TTL asked for", async () => {
    setupRecord = txtRecord;
    const domain = new Domain("ttl-domain", { organizationId: "org_1", domain: "mail.example.org", groupId: "g_1" });
    await settled(publishDmarcRecord("ttl-dmarc", domain, "zone-123", { ttl: 1 }).id);
    expect(declared.find((args) => args.name === "ttl-dmarc")?.inputs).toMatchObject({ ttl: 1 });
  });
});

describe("the program", () => {
  it("publishes the record of the domain it declares, then waits for its verification, in the configured zone", async () => {
    pulumi.runtime.setAllConfig({
      "dmarc-cloudflare-example:domain": "mail.example.org",
      "dmarc-cloudflare-example:zoneId": "zone-abc",
    });
    setupRecord = txtRecord;
    const program = await import("./index");
    expect(await settled(program.verified)).toBe(true);
    expect(inputsOf(`${DMARC}:Organization`)).toMatchObject({ name: "Example Customer" });
    expect(inputsOf(`${DMARC}:Domain`)).toMatchObject({
      organizationId: "org_1",
      groupId: "g_1",
      domain: "mail.example.org",
      setupRecordType: "TXT",
    });
    expect(inputsOf(RECORD_TYPE)).toMatchObject({
      zoneId: "zone-abc",
      name: "_dmarc.mail.example.org",
      type: "TXT",
      content: `"${txtRecord.value}"`,
    });
    expect(inputsOf(`${DMARC}:DomainVerification`)).toMatchObject({
      domainId: "org_1/mail.example.org",
      recordValue: `"${txtRecord.value}"`,
      timeout: "45m",
    });
  });
});

describe("txtContent", () => {
  it("quotes a short value as one character-string", () => {
    expect(txtContent("v=DMARC1; p=none")).toBe('"v=DMARC1; p=none"');
  });

  it("splits a value longer than 255 octets into quoted strings of at most 255", () => {
    const value = `v=DMARC1; p=none; rua=${Array.from({ length: 30 }, (_, i) => `mailto:r${i}@example.org`).join(",")}`;
    const content = txtContent(value);
    const strings = [...content.matchAll(/"([^"]*)"/g)].map((match) => match[1] ?? "");
    expect(value.length).toBeGreaterThan(255);
    expect(strings.length).toBe(Math.ceil(value.length / 255));
    expect(strings.every((piece) => piece.length <= 255)).toBe(true);
    expect(strings.join("")).toBe(value);
    expect(content).toBe(strings.map((piece) => `"${piece}"`).join(" "));
  });

  it("counts octets, not characters, and never cuts a character in two", () => {
    const strings = txtContent("é".repeat(200)).split(" ");
    expect(strings.map((piece) => Buffer.byteLength(piece.slice(1, -1)))).toEqual([254, 146]);
  });

  it("escapes quotes and backslashes inside a string", () => {
    expect(txtContent('say "hi" \\ bye')).toBe('"say \\"hi\\" \\\\ bye"');
  });
});
