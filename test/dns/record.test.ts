import { createSocket } from "node:dgram";
import { dynamicProviderHost, SETTINGS } from "pulumi-dmarc-partner";
import {
  authoritativeRecords,
  Opcode,
  RecordClass,
  RecordType,
  type ResourceRecord,
  requestMessage,
  signedRequest,
} from "pulumi-dmarc-partner/dns";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import {
  DMARC_NAMES,
  dnsServersUnavailable,
  LOCKED_ZONE,
  type RunningDnsServer,
  startDnsServer,
  ZONE,
} from "../support/dnsServers";
import { freePort } from "../support/loopback";

// Rfc2136Record through the provider host (check, create, read, update,
// delete, as the engine calls them) against BIND 9 and Knot DNS, with no
// dmarc:* settings at all.

const TYPE = "Rfc2136Record";
const unavailable = await dnsServersUnavailable();
if (unavailable) console.warn(`Skipping the RFC 2136 tests against BIND and Knot: ${unavailable}`);

const DMARC = "v=DMARC1; p=none; rua=mailto:org_1@rua.dmarc-emulator.test; fo=1";
const CNAME_TARGET = "acme.example.org-1.records.dmarc-emulator.test";
const SITE = "site-verification=abc123";
type Props = Record<string, unknown>;

/** Whether a message is an UPDATE (opcode 5, bits 3 to 6 of its third byte). */
function isUpdate(message: Buffer): boolean {
  return ((message.readUInt8(2) >> 3) & 0xf) === 5;
}

/**
 * A UDP relay to a loopback server that drops the first `drop` answers to
 * updates, as a lossy network would, and runs `beforeUpdate` once before
 * passing the first update on, as another writer racing it would.
 */
async function answerDroppingProxy(port: number, drop: number, beforeUpdate?: () => Promise<void>) {
  const front = createSocket("udp4");
  let dropped = 0;
  let raced: Promise<void> | undefined;
  front.on("message", async (request, client) => {
    if (isUpdate(request) && beforeUpdate) {
      raced ??= beforeUpdate();
      await raced;
    }
    const back = createSocket("udp4");
    back.on("message", (answer) => {
      back.close();
      if (isUpdate(answer) && dropped < drop) dropped += 1;
      else front.send(answer, client.port, client.address);
    });
    back.send(request, port, "127.0.0.1");
  });
  await new Promise<void>((resolve) => front.bind(0, "127.0.0.1", resolve));
  return {
    address: `127.0.0.1:${front.address().port}`,
    dropped: () => dropped,
    close: () => new Promise<void>((resolve) => front.close(() => resolve())),
  };
}

describe.skipIf(unavailable !== undefined).each(["bind", "knot"] as const)("Rfc2136Record against %s", (kind) => {
  let dns: RunningDnsServer;
  const declare = (overrides: Props = {}): Props => ({
    server: dns.address,
    name: DMARC_NAMES[0],
    type: "TXT",
    value: DMARC,
    keyName: dns.key.name,
    keySecret: dns.key.secret,
    ...overrides,
  });

  async function checked(news: Props): Promise<Props> {
    const result = await dynamicProviderHost.check(TYPE, {}, news);
    if (!result.inputs) throw new Error(JSON.stringify(result.failures));
    return result.inputs;
  }

  async function create(news: Props): Promise<{ id: string; outs: Props }> {
    const created = await dynamicProviderHost.create(TYPE, await checked(news));
    return { id: created.id, outs: created.outs as Props };
  }

  async function update(id: string, olds: Props, news: Props): Promise<Props> {
    return (await dynamicProviderHost.update(TYPE, id, olds, await checked(news))).outs as Props;
  }

  async function read(id: string, props: Props): Promise<Props | undefined> {
    return (await dynamicProviderHost.read(TYPE, id, props)).props as Props | undefined;
  }

  /** The serial of the zone's SOA record, which the server raises with every update. */
  async function zoneSerial(): Promise<number> {
    const [soa] = await authoritativeRecords(dns.target(dns.adminKey), ZONE, ZONE, [RecordType.SOA]);
    if (!soa) throw new Error(`${kind} serves no SOA record for ${ZONE}`);
    // The rdata ends with serial, refresh, retry, expire and minimum, 4 bytes each.
    return soa.data.readUInt32BE(soa.data.length - 20);
  }

  /** An update signed with the administrator key, as someone changing the zone by hand would send. */
  async function byHand(...updates: ResourceRecord[]): Promise<void> {
    const zone = { name: ZONE, type: RecordType.SOA, class: RecordClass.IN };
    await signedRequest(dns.target(dns.adminKey), requestMessage(Opcode.UPDATE, zone, updates), {
      zone: ZONE,
      request: "a change by hand",
    });
  }

  /** A TXT record of these character-strings, added (or with `remove`, deleted) by hand. */
  function txt(name: string, strings: string[], options: { ttl?: number; remove?: boolean } = {}): ResourceRecord {
    const data = Buffer.concat(strings.map((text) => Buffer.concat([Buffer.from([text.length]), Buffer.from(text)])));
    const { ttl = 300, remove = false } = options;
    return {
      name,
      type: RecordType.TXT,
      class: remove ? RecordClass.NONE : RecordClass.IN,
      ttl: remove ? 0 : ttl,
      data,
    };
  }

  beforeAll(async () => {
    dns = await startDnsServer(kind);
  });

  afterAll(async () => {
    await dns?.stop();
  });

  it("creates the record, finding the zone by its SOA record, with no dmarc:* settings", async () => {
    const name = DMARC_NAMES[0] as string;
    const { id, outs } = await create(declare());
    expect(id).toBe(name);
    expect(outs).toMatchObject({ zoneName: ZONE, ttl: 3600, keyAlgorithm: "hmac-sha256" });
    expect(await dns.served(name)).toEqual([`TXT ${DMARC} @3600`]);
    await dynamicProviderHost.delete(TYPE, id, outs);
    expect(await dns.served(name)).toEqual([]);
  });

  it("updates the value and the TTL in place, changes CNAME to TXT and back, and a long TXT goes over TCP", async () => {
    const name = DMARC_NAMES[1] as string;
    const { id, outs } = await create(declare({ name, zone: ZONE }));
    const longer = `${DMARC}; ruf=mailto:${"f".repeat(600)}@acme.example`;
    let props = await update(id, outs, declare({ name, zone: ZONE, value: longer, ttl: 300 }));
    expect(await dns.served(name)).toEqual([`TXT ${longer} @300`]);
    props = await update(id, props, declare({ name, zone: ZONE, type: "CNAME", value: CNAME_TARGET, ttl: 300 }));
    expect(await dns.served(name)).toEqual([`CNAME ${CNAME_TARGET} @300`]);
    props = await update(id, props, declare({ name, zone: ZONE, value: DMARC, ttl: 600 }));
    expect(await dns.served(name)).toEqual([`TXT ${DMARC} @600`]);
    await dynamicProviderHost.delete(TYPE, id, props);
    expect(await dns.served(name)).toEqual([]);
  });

  it("deletes only the record it wrote, leaving another record at the name", async () => {
    const name = DMARC_NAMES[2] as string;
    const { id, outs } = await create(declare({ name }));
    await dns.addTxt(name, "site-verification=abc123");
    await dynamicProviderHost.delete(TYPE, id, outs);
    expect(await dns.served(name)).toEqual(["TXT site-verification=abc123 @300"]);
    // Deleting what is already gone succeeds.
    await dynamicProviderHost.delete(TYPE, id, outs);
  });

  it("sees a change and a removal made outside, and a plain update puts the record back", async () => {
    const name = DMARC_NAMES[3] as string;
    const { id, outs } = await create(declare({ name }));
    const changed = "v=DMARC1; p=reject";
    await dns.put(name, "TXT", changed);
    const seen = await read(id, outs);
    expect(seen).toMatchObject({ value: changed, ttl: 300, type: "TXT" });
    const restored = await update(id, seen as Props, declare({ name }));
    expect(await dns.served(name)).toEqual([`TXT ${DMARC} @3600`]);

    await dns.put(name, "TXT", "not-dmarc=1");
    expect(await read(id, restored)).toBeUndefined();
    await dynamicProviderHost.delete(TYPE, id, restored);
    expect(await dns.served(name)).toEqual(["TXT not-dmarc=1 @300"]);
  });

  it("adopts an existing record by its name, and refuses to adopt one that differs", async () => {
    const name = DMARC_NAMES[0] as string;
    await dns.put(name, "TXT", DMARC);
    const adopted = await dynamicProviderHost.create(TYPE, await checked(declare({ importId: name, ttl: 300 })));
    expect(adopted.id).toBe(name);
    expect(adopted.outs).toMatchObject({ value: DMARC, ttl: 300, zoneName: ZONE });
    await expect(
      dynamicProviderHost.create(TYPE, await checked(declare({ importId: name, value: "v=DMARC1; p=quarantine" }))),
    ).rejects.toThrow(/differs from its declaration.*value: declared "v=DMARC1; p=quarantine", actual/);
    expect(await dns.served(name)).toEqual([`TXT ${DMARC} @300`]);
    await dynamicProviderHost.delete(TYPE, name, adopted.outs as Props);
  });

  it("takes over a record the zone already serves exactly as declared without writing, and writes one that differs", async () => {
    const name = DMARC_NAMES[0] as string;
    await dns.put(name, "TXT", DMARC);
    // Every update raises the zone's SOA serial: an unchanged serial means nothing was written.
    const before = await zoneSerial();
    const taken = await create(declare({ zone: ZONE, ttl: 300 }));
    expect(taken.outs).toMatchObject({ value: DMARC, ttl: 300, zoneName: ZONE });
    expect(await zoneSerial()).toBe(before);
    const rewritten = await create(declare({ zone: ZONE, ttl: 600 }));
    expect(await zoneSerial()).toBeGreaterThan(before);
    expect(await dns.served(name)).toEqual([`TXT ${DMARC} @600`]);
    await dynamicProviderHost.delete(TYPE, name, rewritten.outs);
    expect(await dns.served(name)).toEqual([]);
  });

  it("fails clearly with a wrong secret or an unknown key, and writes nothing", async () => {
    const name = DMARC_NAMES[0] as string;
    const wrongSecret = Buffer.alloc(32, 7).toString("base64");
    const badSig = create(declare({ zone: ZONE, keySecret: wrongSecret }));
    await expect(badSig).rejects.toThrow(
      new RegExp(`^Rfc2136Record ${name}: ${dns.address} answered BADSIG .* \\(key ${dns.key.name}\\).*another secret`),
    );
    await expect(create(declare({ zone: ZONE, keyName: "nobody-key" }))).rejects.toThrow(
      /answered BADKEY .*key nobody-key.*has no key named nobody-key/,
    );
    expect(await dns.served(name)).toEqual([]);
    for (const error of [await badSig.catch((e: Error) => e.message)]) expect(error).not.toContain(wrongSecret);
  });

  it("fails clearly when this machine's clock is ten minutes off the server's (BADTIME), and writes nothing", async () => {
    const name = DMARC_NAMES[0] as string;
    const inputs = await checked(declare({ zone: ZONE }));
    // Only Date moves: the request is signed ten minutes ahead, the sockets and timers run as usual.
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 10 * 60_000 });
    const skewed = dynamicProviderHost.create(TYPE, inputs).finally(() => vi.useRealTimers());
    await expect(skewed).rejects.toThrow(
      new RegExp(
        `^Rfc2136Record ${name}: ${dns.address} answered BADTIME .*\\(key ${dns.key.name}\\).*synchronise them`,
      ),
    );
    expect(await dns.served(name)).toEqual([]);
  });

  it("fails clearly when the key may not update the zone", async () => {
    const name = `_dmarc.${LOCKED_ZONE}`;
    await expect(create(declare({ name, zone: LOCKED_ZONE }))).rejects.toThrow(
      new RegExp(`${dns.address} answered REFUSED to the update of ${name} .*in zone ${LOCKED_ZONE} .*Allow the key`),
    );
  });

  // Both UDP attempts of the update reach the server: with both answers lost, or with the first lost and the
  // second refused because its prerequisites no longer hold (the first attempt's own effect).
  it.each([2, 1])(
    "settles a create when %i answers to its update were lost, asking the server, so state and zone agree",
    async (drop) => {
      const name = DMARC_NAMES[1] as string;
      const proxy = await answerDroppingProxy(dns.port, drop);
      try {
        const { outs } = await create(declare({ name, zone: ZONE, server: proxy.address, ttl: 300 }));
        expect(proxy.dropped()).toBe(drop);
        expect(await dns.served(name)).toEqual([`TXT ${DMARC} @300`]);
        await dynamicProviderHost.delete(TYPE, name, { ...outs, server: dns.address });
      } finally {
        await proxy.close();
      }
    },
  );

  it("fails in bounded time naming the address when the server does not answer", async () => {
    const down = `127.0.0.1:${await freePort()}`;
    const started = Date.now();
    await expect(create(declare({ server: down, zone: ZONE }))).rejects.toThrow(
      new RegExp(`^Rfc2136Record ${DMARC_NAMES[0]}: no answer from ${down} over UDP`),
    );
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  describe("beside other records at its name", () => {
    const name = DMARC_NAMES[2] as string;
    const reject = "v=DMARC1; p=reject";
    const served = async () => (await dns.served(name)).sort();
    const sorted = (...records: string[]) => records.sort();

    // Each case starts from an empty name, whatever the last one left.
    afterEach(async () => {
      const everySet = [RecordType.TXT, RecordType.CNAME].map((type) => ({
        name,
        type,
        class: RecordClass.ANY,
        ttl: 0,
        data: Buffer.alloc(0),
      }));
      await byHand(...everySet);
    });

    it("leaves a third-party TXT through create, value update, TTL heal, value heal, CNAME→TXT and delete", async () => {
      await dns.addTxt(name, SITE);
      const { id, outs } = await create(declare({ name, ttl: 300 }));
      expect(await served()).toEqual(sorted(`TXT ${DMARC} @300`, `TXT ${SITE} @300`));
      const other = "v=DMARC1; p=quarantine";
      let props = await update(id, outs, declare({ name, ttl: 300, value: other }));
      expect(await served()).toEqual(sorted(`TXT ${SITE} @300`, `TXT ${other} @300`));

      // TTL heal: the record put back by hand with another TTL (a TXT set has one TTL, RFC 2181 §5.2).
      await byHand(txt(name, [other], { remove: true }), txt(name, [other], { ttl: 120 }));
      expect(await served()).toEqual(sorted(`TXT ${SITE} @120`, `TXT ${other} @120`));
      const shortened = (await read(id, props)) as Props;
      expect(shortened).toMatchObject({ value: other, ttl: 120 });
      props = await update(id, shortened, declare({ name, ttl: 300, value: other }));
      expect(await served()).toEqual(sorted(`TXT ${SITE} @300`, `TXT ${other} @300`));

      // Value heal: our record replaced by hand with another policy.
      await byHand(txt(name, [other], { remove: true }), txt(name, [reject]));
      const drifted = (await read(id, props)) as Props;
      expect(drifted).toMatchObject({ value: reject });
      props = await update(id, drifted, declare({ name, ttl: 300, value: other }));
      expect(await served()).toEqual(sorted(`TXT ${SITE} @300`, `TXT ${other} @300`));
      await dynamicProviderHost.delete(TYPE, id, props);
      expect(await served()).toEqual([`TXT ${SITE} @300`]);

      // CNAME→TXT: the state holds a CNAME that someone replaced by the site's TXT; up without a refresh.
      const stateSaysCname = { ...outs, type: "CNAME", value: CNAME_TARGET };
      props = await update(id, stateSaysCname, declare({ name, ttl: 300 }));
      expect(await served()).toEqual(sorted(`TXT ${DMARC} @300`, `TXT ${SITE} @300`));
      await dynamicProviderHost.delete(TYPE, id, props);
      expect(await served()).toEqual([`TXT ${SITE} @300`]);
    });

    it("replaces a second DMARC policy placed by hand, before a create and beside its record", async () => {
      await dns.addTxt(name, reject);
      const { id, outs } = await create(declare({ name, ttl: 300 }));
      expect(await served()).toEqual([`TXT ${DMARC} @300`]);
      await dns.addTxt(name, reject);
      // Two policies make receivers ignore both: a refresh shows the change, up puts the record back alone.
      const seen = (await read(id, outs)) as Props;
      expect(seen).toMatchObject({ value: reject });
      const props = await update(id, seen, declare({ name, ttl: 300 }));
      expect(await served()).toEqual([`TXT ${DMARC} @300`]);
      await dynamicProviderHost.delete(TYPE, id, props);
    });

    it("compares a TXT split into several strings by their concatenation", async () => {
      // The declared value, published by hand as two strings: served as declared, nothing to write.
      const [head, tail] = [DMARC.slice(0, 10), DMARC.slice(10)];
      await byHand(txt(name, [head, tail]));
      const before = await zoneSerial();
      const adopted = await create(declare({ name, zone: ZONE, ttl: 300 }));
      expect(await zoneSerial()).toBe(before);
      await dynamicProviderHost.delete(TYPE, adopted.id, adopted.outs);
      expect(await served()).toEqual([]);

      await byHand(txt(name, [head, tail]));
      const { id, outs } = await create(declare({ name, zone: ZONE, ttl: 300 }));
      const props = await update(id, outs, declare({ name, zone: ZONE, ttl: 300, value: reject }));
      expect(await served()).toEqual([`TXT ${reject} @300`]);
      await dynamicProviderHost.delete(TYPE, id, props);
      expect(await served()).toEqual([]);
    });

    it("refuses a CNAME where a third-party TXT stands, naming it, and writes nothing", async () => {
      await dns.addTxt(name, SITE);
      const before = await zoneSerial();
      const refused = create(declare({ name, zone: ZONE, type: "CNAME", value: CNAME_TARGET, ttl: 300 }));
      await expect(refused).rejects.toThrow(
        new RegExp(
          `^Rfc2136Record ${name}: ${dns.address} holds other records at the name in zone ${ZONE}: TXT "${SITE}" at ${name} \\(TTL 300\\)\\. A CNAME must be the only record`,
        ),
      );
      expect(await refused.catch((error: Error) => error.message)).not.toContain(dns.key.secret);
      expect(await zoneSerial()).toBe(before);
      expect(await served()).toEqual([`TXT ${SITE} @300`]);
    });

    it("takes over a record served as declared beside a third-party TXT without writing", async () => {
      await dns.addTxt(name, SITE);
      await dns.addTxt(name, DMARC);
      const before = await zoneSerial();
      const taken = await create(declare({ name, zone: ZONE, ttl: 300 }));
      expect(await zoneSerial()).toBe(before);
      await dynamicProviderHost.delete(TYPE, name, taken.outs);
      expect(await served()).toEqual([`TXT ${SITE} @300`]);
    });

    it("fails clearly, writing nothing, when the records at the name change between its read and its update", async () => {
      const proxy = await answerDroppingProxy(dns.port, 0, () => dns.addTxt(name, reject));
      try {
        await dns.addTxt(name, SITE);
        const racing = create(declare({ name, zone: ZONE, server: proxy.address, ttl: 300 }));
        await expect(racing).rejects.toThrow(
          new RegExp(
            `^Rfc2136Record ${name}: .*answered (NXRRSET|YXRRSET) to the update of ${name} .*changed after they were read, so nothing was written.*run again`,
          ),
        );
        expect(await served()).toEqual(sorted(`TXT ${SITE} @300`, `TXT ${reject} @300`));
      } finally {
        await proxy.close();
      }
    });
  });
});

describe("Rfc2136Record's checks at preview", () => {
  const valid = {
    server: "ns1.example.net",
    name: "_dmarc.acme.example",
    zone: "acme.example",
    type: "TXT",
    value: DMARC,
    keyName: "dmarc-update",
    keySecret: Buffer.alloc(32, 1).toString("base64"),
  };

  async function failures(overrides: Props): Promise<string[]> {
    const result = await dynamicProviderHost.check(TYPE, {}, { ...valid, ...overrides });
    return (result.failures ?? []).map((failure) => failure.reason);
  }

  it("needs no dmarc:* settings, while the service's resources still do", async () => {
    const saved = SETTINGS.map(({ env }) => [env, process.env[env]] as const);
    for (const [env] of saved) delete process.env[env];
    try {
      expect((await dynamicProviderHost.check(TYPE, {}, valid)).failures).toBeUndefined();
      await expect(dynamicProviderHost.check("Organization", {}, { name: "x" })).rejects.toThrow(/dmarc:baseUrl/);
    } finally {
      for (const [env, value] of saved) if (value !== undefined) process.env[env] = value;
    }
  });

  it("accepts a valid declaration, normalising names and defaulting port, TTL and algorithm", async () => {
    const result = await dynamicProviderHost.check(TYPE, {}, { ...valid, name: "_DMARC.Acme.Example." });
    expect(result.inputs).toMatchObject({ name: "_dmarc.acme.example", ttl: 3600, keyAlgorithm: "hmac-sha256" });
  });

  it.each([
    [{ name: "not a name" }, /input "name" must be a fully qualified DNS name.*got "not a name"/],
    [{ zone: "other.example" }, /input "zone" must contain the record's name _dmarc.acme.example; got "other.example"/],
    [{ ttl: 5 }, /input "ttl" must be at least 60 seconds; got 5/],
    [{ ttl: 10_000_000 }, /input "ttl" must be at most 604800 seconds/],
    [{ type: "A" }, /input "type" .*got "A"/],
    [{ server: "ns1:99999" }, /input "server" must be the primary server as "host:port"/],
    [{ keyAlgorithm: "hmac-md5" }, /input "keyAlgorithm" is refused: MD5 is broken.*use one of hmac-sha224/],
    [{ keyAlgorithm: "hmac-foo" }, /input "keyAlgorithm" must be one of hmac-sha224, hmac-sha256/],
    [{ type: "CNAME", value: "not a host" }, /input "value" must be a DNS name, the CNAME's target/],
  ])("refuses %o", async (overrides, message) => {
    expect((await failures(overrides)).join("\n")).toMatch(new RegExp(`^Rfc2136Record ${message.source}`, "m"));
  });

  it("refuses a secret that is not base64 without quoting it", async () => {
    const secret = "not base64 at all!";
    const reasons = (await failures({ keySecret: secret })).join("\n");
    expect(reasons).toMatch(/input "keySecret" must be the key's secret in base64.*got a secret \(not shown\)/);
    expect(reasons).not.toContain(secret);
  });
});
