import { randomBytes } from "node:crypto";
import { createSocket, type RemoteInfo, type Socket } from "node:dgram";
import { createServer, type Server, type Socket as TcpSocket } from "node:net";
import type { Logger } from "pino";
import {
  type DecodedMessage,
  type DnsMessage,
  decodeMessage,
  encodeMessage,
  encodeName,
  normalizeName,
  Opcode,
  Rcode,
  RecordClass,
  RecordType,
  type ResourceRecord,
  signMessage,
  type TsigAlgorithm,
  type TsigKey,
  tsigOf,
  txtData,
  verifyMessage,
  withTsigError,
} from "pulumi-dmarc-partner/dns";
import type { Store, ZoneRecord } from "../store";
import { SERVICE_DOMAIN } from "./dmarc";
import { prerequisiteRefusal } from "./prerequisites";
import { applyUpdates } from "./updates";

export { normalizeName } from "pulumi-dmarc-partner/dns";

const TTL_SECONDS = 60;
const MAX_CNAME_CHAIN = 8;
const UDP_LIMIT = 512;
const BIND_ATTEMPTS = 5;
// SOA timers (refresh, retry, expire, minimum): what a secondary would use; nothing here transfers zones.
const SOA_TIMERS = [3600, 600, 86_400, TTL_SECONDS];

/** The key RFC 2136 updates to the simulated zone are signed with, as tsig-keygen prints one. */
export interface ZoneKey {
  name: string;
  algorithm: TsigAlgorithm;
  /** base64 */
  secret: string;
}

export function generatedZoneKey(): ZoneKey {
  return { name: "emulator-update", algorithm: "hmac-sha256", secret: randomBytes(32).toString("base64") };
}

function u32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32BE(value);
  return buffer;
}

/**
 * The simulated DNS zone: records written by RFC 2136 updates signed with the
 * zone's TSIG key (or through the control plane), served over UDP and TCP so
 * verification resolves them exactly as it would real ones. It is
 * authoritative for every domain the service knows and for the service's own
 * domain, whose names (CNAME targets) come from `served`.
 */
export class SimulatedZone {
  private socket: Socket | undefined;
  private tcp: Server | undefined;
  private readonly tcpClients = new Set<TcpSocket>();
  private readonly key: TsigKey;
  private serial = 1;

  constructor(
    private readonly store: Store,
    private readonly served: (name: string) => string | undefined,
    private readonly log: Logger,
    readonly zoneKey: ZoneKey,
  ) {
    this.key = {
      name: normalizeName(zoneKey.name),
      algorithm: zoneKey.algorithm,
      secret: Buffer.from(zoneKey.secret, "base64"),
    };
  }

  put(record: ZoneRecord): void {
    this.store.dnsRecords.set(record.name, record);
    this.changed();
  }

  remove(name: string): void {
    this.store.dnsRecords.delete(normalizeName(name));
    this.changed();
  }

  list(): ZoneRecord[] {
    return [...this.store.dnsRecords.values()];
  }

  private changed(): void {
    this.serial += 1;
    this.store.changed();
  }

  /** Starts the UDP and TCP servers on one port (0: a free one); resolves to its "host:port". */
  async listen(host: string, port = 0): Promise<string> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.bind(host, port);
      } catch (error) {
        await this.close();
        // A free UDP port may be taken for TCP: another one is tried.
        const retry = port === 0 && (error as NodeJS.ErrnoException).code === "EADDRINUSE" && attempt < BIND_ATTEMPTS;
        if (!retry) throw error;
      }
    }
  }

  private async bind(host: string, port: number): Promise<string> {
    const socket = createSocket(host.includes(":") ? "udp6" : "udp4");
    this.socket = socket;
    socket.on("message", (message, remote) => this.answerUdp(socket, message, remote));
    await new Promise<void>((resolve, reject) => {
      socket.once("error", reject);
      socket.bind(port, host, () => {
        socket.off("error", reject);
        resolve();
      });
    });
    socket.on("error", (error) => this.log.warn({ err: error }, "simulated DNS zone socket error"));
    const address = socket.address();
    const tcp = createServer((client) => this.answerTcp(client));
    this.tcp = tcp;
    await new Promise<void>((resolve, reject) => {
      tcp.once("error", reject);
      tcp.listen(address.port, host, () => {
        tcp.off("error", reject);
        resolve();
      });
    });
    return address.family === "IPv6" ? `[${address.address}]:${address.port}` : `${address.address}:${address.port}`;
  }

  async close(): Promise<void> {
    const socket = this.socket;
    const tcp = this.tcp;
    this.socket = undefined;
    this.tcp = undefined;
    for (const client of this.tcpClients) client.destroy();
    await Promise.all([
      new Promise<void>((resolve) => (socket ? socket.close(() => resolve()) : resolve())),
      new Promise<void>((resolve) => (tcp ? tcp.close(() => resolve()) : resolve())),
    ]);
  }

  private answerUdp(socket: Socket, message: Buffer, remote: RemoteInfo): void {
    const answer = this.answer(message, UDP_LIMIT);
    if (answer) socket.send(answer, remote.port, remote.address);
  }

  private answerTcp(client: TcpSocket): void {
    this.tcpClients.add(client);
    let received = Buffer.alloc(0);
    client.on("close", () => this.tcpClients.delete(client));
    client.on("error", () => client.destroy());
    client.on("data", (chunk) => {
      received = Buffer.concat([received, chunk]);
      while (received.length >= 2 && received.length >= 2 + received.readUInt16BE(0)) {
        const message = received.subarray(2, 2 + received.readUInt16BE(0));
        received = received.subarray(2 + message.length);
        const answer = this.answer(message, Number.POSITIVE_INFINITY);
        if (!answer) continue;
        const length = Buffer.alloc(2);
        length.writeUInt16BE(answer.length);
        client.write(Buffer.concat([length, answer]));
      }
    });
  }

  /** The answer to one message, signed when the request was; undefined for what cannot be read. */
  private answer(bytes: Buffer, limit: number): Buffer | undefined {
    let request: DecodedMessage;
    try {
      request = decodeMessage(bytes);
    } catch {
      return undefined;
    }
    if (request.response) return undefined;
    const now = Date.now();
    const tsig = tsigOf(request);
    const check = tsig ? verifyMessage(bytes, request, this.key, { now }) : undefined;
    if (tsig && check?.status === "failed") {
      this.log.info({ key: tsig.keyName, error: check.error }, "DNS request with a signature that does not verify");
      return withTsigError(encodeMessage(this.reply(request, Rcode.NOTAUTH)), tsig, check.error, now);
    }
    let reply: DnsMessage;
    if (request.opcode === Opcode.UPDATE) reply = this.update(request, check?.status === "verified");
    else if (request.opcode === Opcode.QUERY) reply = this.query(request);
    else reply = this.reply(request, Rcode.NOTIMP);
    let unsigned = encodeMessage(reply);
    if (unsigned.length > limit) unsigned = encodeMessage({ ...this.reply(request, Rcode.NOERROR), truncated: true });
    return check?.status === "verified"
      ? signMessage(unsigned, this.key, { now, requestMac: check.tsig.mac }).bytes
      : unsigned;
  }

  private reply(request: DecodedMessage, rcode: number): DnsMessage {
    return {
      id: request.id,
      response: true,
      opcode: request.opcode,
      authoritative: true,
      truncated: false,
      recursionDesired: request.recursionDesired,
      rcode,
      questions: request.questions,
      answers: [],
      authorities: [],
      additionals: [],
    };
  }

  /**
   * The zone a name is in: the longest that contains it of the service's own
   * domain, the domains the service knows, and the domains of the records the
   * zone holds (`_dmarc.x.example` is in `x.example`), so a record stays
   * removable after its domain left the service.
   */
  private zoneOf(name: string): string | undefined {
    const zones = [
      SERVICE_DOMAIN,
      ...[...this.store.domains.values()].map((domain) => domain.domain),
      ...[...this.store.dnsRecords.keys()].map((owner) => owner.replace(/^(_[^.]*\.)+/, "")),
    ];
    return zones.filter((zone) => name === zone || name.endsWith(`.${zone}`)).sort((a, b) => b.length - a.length)[0];
  }

  private soa(zone: string): ResourceRecord {
    const data = Buffer.concat([
      encodeName(`ns.${SERVICE_DOMAIN}`),
      encodeName(`hostmaster.${SERVICE_DOMAIN}`),
      u32(this.serial),
      ...SOA_TIMERS.map(u32),
    ]);
    return { name: zone, type: RecordType.SOA, class: RecordClass.IN, ttl: TTL_SECONDS, data };
  }

  private update(request: DecodedMessage, signed: boolean): DnsMessage {
    const [zoneQuestion] = request.questions;
    if (!signed) {
      this.log.info("unsigned DNS update refused");
      return this.reply(request, Rcode.REFUSED);
    }
    if (request.questions.length !== 1 || zoneQuestion?.type !== RecordType.SOA)
      return this.reply(request, Rcode.FORMERR);
    const zone = normalizeName(zoneQuestion.name);
    if (this.zoneOf(zone) !== zone) return this.reply(request, Rcode.NOTAUTH);
    const rcode =
      prerequisiteRefusal(this.store.dnsRecords, zone, request.answers) ??
      applyUpdates(this.store.dnsRecords, zone, request.authorities);
    if (rcode === Rcode.NOERROR) this.changed();
    this.log.info({ zone, rcode, updates: request.authorities.length }, "DNS update");
    return this.reply(request, rcode);
  }

  private query(request: DecodedMessage): DnsMessage {
    const reply = this.reply(request, Rcode.NOERROR);
    for (const question of request.questions) {
      const name = normalizeName(question.name);
      const zone = this.zoneOf(name);
      if (question.type === RecordType.SOA && zone === name) {
        reply.answers.push(this.soa(zone));
        continue;
      }
      const found = this.resolve(name, question.type);
      if (!found) reply.rcode = Rcode.NXDOMAIN;
      else reply.answers.push(...found);
      // No answer: the zone's SOA says which zone answered (RFC 2308).
      if ((found ?? []).length === 0 && zone) reply.authorities.push(this.soa(zone));
    }
    return reply;
  }

  private record(name: string, type: number, ttl: number | undefined, value: string): ResourceRecord {
    const data = type === RecordType.TXT ? txtData(value) : encodeName(value);
    return { name, type, class: RecordClass.IN, ttl: ttl ?? TTL_SECONDS, data };
  }

  /** The answers for one question, following CNAMEs; undefined when the name does not exist at all. */
  private resolve(name: string, type: number): ResourceRecord[] | undefined {
    const answers: ResourceRecord[] = [];
    let current = name;
    for (let hops = 0; hops < MAX_CNAME_CHAIN; hops += 1) {
      const record = this.store.dnsRecords.get(current);
      if (record?.type !== "CNAME" || type === RecordType.CNAME) break;
      const target = normalizeName(record.values[0] ?? "");
      answers.push(this.record(current, RecordType.CNAME, record.ttl, target));
      current = target;
    }
    const record = this.store.dnsRecords.get(current);
    const served = record ? undefined : this.served(current);
    if (!record && served === undefined)
      return answers.length > 0 || this.zoneOf(current) === current ? answers : undefined;
    const recordType = record && (record.type === "TXT" ? RecordType.TXT : RecordType.CNAME);
    if (record && recordType === type) {
      for (const value of record.values) answers.push(this.record(current, type, record.ttl, value));
    } else if (served !== undefined && type === RecordType.TXT) {
      answers.push(this.record(current, RecordType.TXT, undefined, served));
    }
    return answers;
  }
}
