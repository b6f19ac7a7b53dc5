import { DnsAnswerError, Rcode } from "./errors";
import {
  encodeName,
  normalizeName,
  Opcode,
  RecordClass,
  RecordType,
  type ResourceRecord,
  requestMessage,
  txtData,
} from "./message";
import { zoneOf } from "./query";
import { type DnsRequest, type DnsTarget, signedRequest } from "./request";
import { TsigErrorCode } from "./tsig";

// Dynamic updates (RFC 2136): each change is one signed message, which the
// server applies whole or not at all.

/** The record types a DMARC setup record can have, and their type codes. */
export const PUBLISHED_TYPES = { TXT: RecordType.TXT, CNAME: RecordType.CNAME } as const;
export type PublishedType = keyof typeof PUBLISHED_TYPES;

export interface PublishedRecord {
  zone: string;
  name: string;
  type: PublishedType;
  /** A TXT record's text (split into 255-byte strings on the wire) or a CNAME's target. */
  value: string;
  ttl: number;
}

/** A record's data on the wire. */
export function recordData(type: PublishedType, value: string): Buffer {
  return type === "TXT" ? txtData(value) : encodeName(value);
}

function updateMessage(zone: string, updates: ResourceRecord[]): DnsRequest {
  return requestMessage(Opcode.UPDATE, { name: zone, type: RecordType.SOA, class: RecordClass.IN }, updates);
}

/**
 * Sends an update. Knot answers BADKEY both for a key it does not know and
 * for a known key its acl does not let update the name: when a query signed
 * with the same key verifies, the key is known, and the update was refused.
 */
async function sendUpdate(target: DnsTarget, message: DnsRequest, zone: string, request: string): Promise<void> {
  try {
    await signedRequest(target, message, { zone, request });
  } catch (error) {
    if (!(error instanceof DnsAnswerError) || error.code !== TsigErrorCode.BADKEY) throw error;
    const keyKnown = await zoneOf(target, zone).then(
      () => true,
      () => false,
    );
    if (!keyKnown) throw error;
    throw new DnsAnswerError(
      Rcode.REFUSED,
      error.context,
      " (it answered BADKEY to the update but accepts the key on queries, as Knot does when its acl refuses the update)",
    );
  }
}

/** "Delete an RRset" (RFC 2136 §2.5.2): class ANY, no data. */
function deleteRecordSet(name: string, type: number): ResourceRecord {
  return { name, type, class: RecordClass.ANY, ttl: 0, data: Buffer.alloc(0) };
}

/**
 * Makes the record the only TXT or CNAME at its name, in one message: the
 * TXT and CNAME record sets there are deleted and the record added, so a
 * CNAME never stands beside a TXT, and a reader never sees the name empty.
 */
export async function replaceRecordSet(target: DnsTarget, record: PublishedRecord): Promise<void> {
  const name = normalizeName(record.name);
  const updates = [
    ...Object.values(PUBLISHED_TYPES).map((type) => deleteRecordSet(name, type)),
    {
      name,
      type: PUBLISHED_TYPES[record.type],
      class: RecordClass.IN,
      ttl: record.ttl,
      data: recordData(record.type, record.value),
    },
  ];
  const zone = normalizeName(record.zone);
  await sendUpdate(target, updateMessage(zone, updates), zone, `the update of ${name} (${record.type})`);
}

/** Removes exactly this record ("delete an RR from an RRset", RFC 2136 §2.5.4); other records at the name stay. */
export async function removeRecord(target: DnsTarget, record: Omit<PublishedRecord, "ttl">): Promise<void> {
  const name = normalizeName(record.name);
  const update: ResourceRecord = {
    name,
    type: PUBLISHED_TYPES[record.type],
    class: RecordClass.NONE,
    ttl: 0,
    data: recordData(record.type, record.value),
  };
  const zone = normalizeName(record.zone);
  await sendUpdate(target, updateMessage(zone, [update]), zone, `the removal of ${name} (${record.type})`);
}
