// The DNS message format (RFC 1035 §4, RFC 2136 §2): a header, four sections
// of records, names as labels. Records carry their rdata as bytes; names
// inside the rdata of the types we read (CNAME, NS, SOA) are expanded on
// decoding, so rdata never points into the message it came from.

export const RecordType = { A: 1, NS: 2, CNAME: 5, SOA: 6, TXT: 16, TSIG: 250, ANY: 255 } as const;
export const RecordClass = { IN: 1, NONE: 254, ANY: 255 } as const;
export const Opcode = { QUERY: 0, UPDATE: 5 } as const;

const QR = 0x8000;
const AA = 0x0400;
const TC = 0x0200;
const HEADER_BYTES = 12;
const MAX_LABEL = 63;
const MAX_NAME = 255;
const POINTER = 0xc0;
// Types whose rdata holds names that may be compressed: expanded on decoding.
const NAME_RDATA: Readonly<Record<number, readonly ("name" | number)[]>> = {
  [RecordType.NS]: ["name"],
  [RecordType.CNAME]: ["name"],
  [RecordType.SOA]: ["name", "name", 20],
};

export interface Question {
  name: string;
  type: number;
  class: number;
}

export interface ResourceRecord {
  name: string;
  type: number;
  class: number;
  ttl: number;
  data: Buffer;
}

/**
 * One message. In an UPDATE the sections are the zone, the prerequisites,
 * the updates and the additional records; in a query, the question, answer,
 * authority and additional records.
 */
export interface DnsMessage {
  id: number;
  response: boolean;
  opcode: number;
  authoritative: boolean;
  truncated: boolean;
  recursionDesired: boolean;
  rcode: number;
  questions: Question[];
  answers: ResourceRecord[];
  authorities: ResourceRecord[];
  additionals: ResourceRecord[];
}

/** A decoded message and where its last additional record starts: a TSIG record is signed over the bytes before it. */
export interface DecodedMessage extends DnsMessage {
  lastAdditionalOffset: number;
}

export class DnsFormatError extends Error {
  override readonly name = "DnsFormatError";
}

/** A name as this module keeps it: lower case, no trailing dot; the root is "". */
export function normalizeName(name: string): string {
  return name.trim().toLowerCase().replace(/\.$/, "");
}

export function encodeName(name: string): Buffer {
  const normalized = normalizeName(name);
  const labels = normalized === "" ? [] : normalized.split(".");
  const parts: Buffer[] = [];
  for (const label of labels) {
    const bytes = Buffer.from(label, "ascii");
    if (bytes.length === 0 || bytes.length > MAX_LABEL) {
      throw new DnsFormatError(`"${name}" has a label of ${bytes.length} bytes; each must have 1 to ${MAX_LABEL}`);
    }
    parts.push(Buffer.from([bytes.length]), bytes);
  }
  parts.push(Buffer.from([0]));
  const encoded = Buffer.concat(parts);
  if (encoded.length > MAX_NAME) throw new DnsFormatError(`"${name}" is longer than ${MAX_NAME} bytes`);
  return encoded;
}

export function u16(value: number): Buffer {
  const buffer = Buffer.alloc(2);
  buffer.writeUInt16BE(value);
  return buffer;
}

function u32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32BE(value >>> 0);
  return buffer;
}

export function encodeRecord(record: ResourceRecord): Buffer {
  return Buffer.concat([
    encodeName(record.name),
    u16(record.type),
    u16(record.class),
    u32(record.ttl),
    u16(record.data.length),
    record.data,
  ]);
}

export function encodeMessage(message: DnsMessage): Buffer {
  const flags =
    (message.response ? QR : 0) |
    ((message.opcode & 0xf) << 11) |
    (message.authoritative ? AA : 0) |
    (message.truncated ? TC : 0) |
    (message.recursionDesired ? 0x0100 : 0) |
    (message.rcode & 0xf);
  return Buffer.concat([
    u16(message.id),
    u16(flags),
    u16(message.questions.length),
    u16(message.answers.length),
    u16(message.authorities.length),
    u16(message.additionals.length),
    ...message.questions.flatMap((question) => [encodeName(question.name), u16(question.type), u16(question.class)]),
    ...[...message.answers, ...message.authorities, ...message.additionals].map(encodeRecord),
  ]);
}

/**
 * A request without its id: a query's question, or an update's zone,
 * prerequisites and updates (RFC 2136 §2: the zone in the question section,
 * the prerequisites in the answer section, the updates in the authority
 * section); no recursion asked for.
 */
export function requestMessage(
  opcode: number,
  question: Question,
  updates: ResourceRecord[] = [],
  prerequisites: ResourceRecord[] = [],
): Omit<DnsMessage, "id"> {
  return {
    response: false,
    opcode,
    authoritative: false,
    truncated: false,
    recursionDesired: false,
    rcode: 0,
    questions: [question],
    answers: prerequisites,
    authorities: updates,
    additionals: [],
  };
}

/** Reads a message from its start, following compression pointers. */
class Reader {
  constructor(
    readonly bytes: Buffer,
    public offset = 0,
  ) {}

  need(count: number): void {
    if (this.offset + count > this.bytes.length) throw new DnsFormatError("message ends inside a record");
  }

  u8(): number {
    this.need(1);
    return this.bytes.readUInt8(this.offset++);
  }

  u16(): number {
    this.need(2);
    const value = this.bytes.readUInt16BE(this.offset);
    this.offset += 2;
    return value;
  }

  u32(): number {
    this.need(4);
    const value = this.bytes.readUInt32BE(this.offset);
    this.offset += 4;
    return value;
  }

  take(count: number): Buffer {
    this.need(count);
    const slice = this.bytes.subarray(this.offset, this.offset + count);
    this.offset += count;
    return slice;
  }

  name(): string {
    const labels: string[] = [];
    let position = this.offset;
    let jumped = false;
    // Each pointer must go backwards, so a loop of pointers ends.
    let limit = position;
    for (;;) {
      if (position >= this.bytes.length) throw new DnsFormatError("message ends inside a name");
      const length = this.bytes.readUInt8(position);
      if ((length & POINTER) === POINTER) {
        if (position + 1 >= this.bytes.length) throw new DnsFormatError("message ends inside a name");
        const target = ((length & ~POINTER) << 8) | this.bytes.readUInt8(position + 1);
        if (target >= limit) throw new DnsFormatError("a name's compression pointer does not point backwards");
        if (!jumped) this.offset = position + 2;
        jumped = true;
        limit = target;
        position = target;
        continue;
      }
      if (length > MAX_LABEL) throw new DnsFormatError(`a label's length byte is ${length}`);
      if (length === 0) {
        if (!jumped) this.offset = position + 1;
        return labels.join(".").toLowerCase();
      }
      if (position + 1 + length > this.bytes.length) throw new DnsFormatError("message ends inside a name");
      labels.push(this.bytes.toString("ascii", position + 1, position + 1 + length));
      position += 1 + length;
    }
  }
}

function readRdata(reader: Reader, type: number, length: number): Buffer {
  const layout = NAME_RDATA[type];
  // An update's deletions carry no data, whatever their type.
  if (!layout || length === 0) return Buffer.from(reader.take(length));
  const end = reader.offset + length;
  reader.need(length);
  const parts = layout.map((part) => (part === "name" ? encodeName(reader.name()) : Buffer.from(reader.take(part))));
  if (reader.offset !== end) throw new DnsFormatError(`a type ${type} record's data is not as long as it says`);
  return Buffer.concat(parts);
}

function readRecord(reader: Reader): ResourceRecord {
  const name = reader.name();
  const type = reader.u16();
  const recordClass = reader.u16();
  const ttl = reader.u32();
  const length = reader.u16();
  return { name, type, class: recordClass, ttl, data: readRdata(reader, type, length) };
}

export function decodeMessage(bytes: Buffer): DecodedMessage {
  if (bytes.length < HEADER_BYTES) throw new DnsFormatError(`a message of ${bytes.length} bytes has no full header`);
  const reader = new Reader(bytes);
  const id = reader.u16();
  const flags = reader.u16();
  const counts = [reader.u16(), reader.u16(), reader.u16(), reader.u16()] as const;
  const questions = Array.from({ length: counts[0] }, () => {
    const name = reader.name();
    return { name, type: reader.u16(), class: reader.u16() };
  });
  const answers = Array.from({ length: counts[1] }, () => readRecord(reader));
  const authorities = Array.from({ length: counts[2] }, () => readRecord(reader));
  let lastAdditionalOffset = reader.offset;
  const additionals = Array.from({ length: counts[3] }, () => {
    lastAdditionalOffset = reader.offset;
    return readRecord(reader);
  });
  return {
    id,
    response: (flags & QR) !== 0,
    opcode: (flags >> 11) & 0xf,
    authoritative: (flags & AA) !== 0,
    truncated: (flags & TC) !== 0,
    recursionDesired: (flags & 0x0100) !== 0,
    rcode: flags & 0xf,
    questions,
    answers,
    authorities,
    additionals,
    lastAdditionalOffset,
  };
}

/** A TXT record's data: the value split into character-strings of at most 255 bytes. */
export function txtData(value: string): Buffer {
  const bytes = Buffer.from(value, "utf8");
  const parts: Buffer[] = [];
  for (let offset = 0; offset < bytes.length || offset === 0; offset += 255) {
    const chunk = bytes.subarray(offset, offset + 255);
    parts.push(Buffer.from([chunk.length]), chunk);
  }
  return Buffer.concat(parts);
}

/** A TXT record's value: its character-strings joined, as DMARC reads them. */
export function txtValue(data: Buffer): string {
  const reader = new Reader(data);
  const parts: Buffer[] = [];
  while (reader.offset < data.length) parts.push(reader.take(reader.u8()));
  return Buffer.concat(parts).toString("utf8");
}

/** The name at `offset` of a record's data (a CNAME's target, an SOA's primary server) and where it ends. */
export function readName(data: Buffer, offset = 0): { name: string; end: number } {
  const reader = new Reader(data, offset);
  const name = reader.name();
  return { name, end: reader.offset };
}
