import { createSocket, type RemoteInfo, type Socket } from "node:dgram";
import * as packet from "dns-packet";
import type { Logger } from "pino";
import type { Store, ZoneRecord } from "../store";

const NXDOMAIN = 3;
const TTL_SECONDS = 60;
const MAX_CNAME_CHAIN = 8;
// A TXT character-string holds at most 255 bytes; longer values are split as DNS requires.
const TXT_CHUNK = 255;

export function normalizeName(name: string): string {
  return name.trim().toLowerCase().replace(/\.$/, "");
}

function chunks(value: string): Buffer[] {
  const bytes = Buffer.from(value);
  const parts: Buffer[] = [];
  for (let offset = 0; offset < bytes.length; offset += TXT_CHUNK)
    parts.push(bytes.subarray(offset, offset + TXT_CHUNK));
  return parts.length > 0 ? parts : [Buffer.alloc(0)];
}

/**
 * The simulated DNS zone: records written through the control plane, served by
 * a loopback UDP DNS server so verification resolves them exactly as it would
 * real ones. Names the service itself serves (CNAME targets) come from `served`.
 */
export class SimulatedZone {
  private socket: Socket | undefined;

  constructor(
    private readonly store: Store,
    private readonly served: (name: string) => string | undefined,
    private readonly log: Logger,
  ) {}

  put(record: ZoneRecord): void {
    this.store.dnsRecords.set(record.name, record);
    this.store.changed();
  }

  remove(name: string): void {
    this.store.dnsRecords.delete(normalizeName(name));
    this.store.changed();
  }

  list(): ZoneRecord[] {
    return [...this.store.dnsRecords.values()];
  }

  /** Starts the UDP server; resolves to its "host:port". */
  listen(host: string): Promise<string> {
    const socket = createSocket(host.includes(":") ? "udp6" : "udp4");
    this.socket = socket;
    socket.on("message", (message, remote) => this.answer(socket, message, remote));
    return new Promise((resolve, reject) => {
      socket.once("error", reject);
      socket.bind(0, host, () => {
        socket.off("error", reject);
        socket.on("error", (error) => this.log.warn({ err: error }, "simulated DNS zone socket error"));
        const address = socket.address();
        resolve(
          address.family === "IPv6" ? `[${address.address}]:${address.port}` : `${address.address}:${address.port}`,
        );
      });
    });
  }

  close(): Promise<void> {
    const socket = this.socket;
    this.socket = undefined;
    return new Promise((resolve) => (socket ? socket.close(() => resolve()) : resolve()));
  }

  private answer(socket: Socket, message: Buffer, remote: RemoteInfo): void {
    let query: packet.DecodedPacket;
    try {
      query = packet.decode(message);
    } catch {
      return;
    }
    const answers: packet.Answer[] = [];
    let flags = packet.AUTHORITATIVE_ANSWER | ((query.flags ?? 0) & packet.RECURSION_DESIRED);
    for (const question of query.questions ?? []) {
      const found = this.resolve(normalizeName(question.name), question.type);
      if (!found) flags |= NXDOMAIN;
      else answers.push(...found);
    }
    const response = packet.encode({
      type: "response",
      id: query.id ?? 0,
      flags,
      questions: query.questions ?? [],
      answers,
    });
    socket.send(response, remote.port, remote.address);
  }

  /** The answers for one question, following CNAMEs; undefined when the name does not exist at all. */
  private resolve(name: string, type: packet.RecordType): packet.Answer[] | undefined {
    const answers: packet.Answer[] = [];
    let current = name;
    for (let hops = 0; hops < MAX_CNAME_CHAIN; hops += 1) {
      const record = this.store.dnsRecords.get(current);
      if (record?.type !== "CNAME" || type === "CNAME") break;
      const target = normalizeName(record.values[0] ?? "");
      answers.push({ type: "CNAME", name: current, ttl: TTL_SECONDS, data: target });
      current = target;
    }
    const record = this.store.dnsRecords.get(current);
    const served = record ? undefined : this.served(current);
    if (!record && served === undefined) return answers.length > 0 ? answers : undefined;
    if (record && record.type === type) {
      for (const value of record.values) {
        answers.push(
          type === "TXT"
            ? { type: "TXT", name: current, ttl: TTL_SECONDS, data: chunks(value) }
            : { type: "CNAME", name: current, ttl: TTL_SECONDS, data: normalizeName(value) },
        );
      }
    } else if (served !== undefined && type === "TXT") {
      answers.push({ type: "TXT", name: current, ttl: TTL_SECONDS, data: chunks(served) });
    }
    return answers;
  }
}
