import {
  deletionOf,
  describeRecord,
  isPublished,
  planAtName,
  type RecordText,
  sameText,
  textOf,
  unchangedSince,
} from "./dmarcName";
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
import { authoritativeRecords, zoneOf } from "./query";
import { type DnsRequest, type DnsTarget, signedRequest } from "./request";
import { DnsUnreachableError, describeServer } from "./transport";
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

function updateMessage(zone: string, updates: ResourceRecord[], prerequisites: ResourceRecord[] = []): DnsRequest {
  const question = { name: zone, type: RecordType.SOA, class: RecordClass.IN };
  return requestMessage(Opcode.UPDATE, question, updates, prerequisites);
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

/** A CNAME was declared where other records stand; nothing was written. */
export class NameInUseError extends Error {
  override readonly name = "NameInUseError";
}

/** The prerequisites failed: the records at the name changed after they were read. */
const RACED: readonly number[] = [Rcode.NXRRSET, Rcode.YXRRSET];

function additionOf(name: string, record: PublishedRecord): ResourceRecord {
  const data = recordData(record.type, record.value);
  return { name, type: PUBLISHED_TYPES[record.type], class: RecordClass.IN, ttl: record.ttl, data };
}

/** The TXT and CNAME records the server holds at the name. */
function recordsAt(target: DnsTarget, zone: string, name: string): Promise<ResourceRecord[]> {
  return authoritativeRecords(target, zone, name, Object.values(PUBLISHED_TYPES));
}

function refuseCnameBeside(target: DnsTarget, zone: string, kept: readonly ResourceRecord[]): never {
  throw new NameInUseError(
    `${describeServer(target.server)} holds other records at the name in zone ${zone}: ${kept.map(describeRecord).join("; ")}. A CNAME must be the only record at its name, so nothing was written. Remove those records from the zone, or publish the setup record as TXT, which may stand beside them.`,
  );
}

/**
 * Sends the guarded update. When its answer is lost, or a resend of it
 * found its own effect (the prerequisites no longer hold), the name is read
 * again: if it holds the record as declared, the update took effect.
 */
async function sendGuarded(
  target: DnsTarget,
  at: { zone: string; name: string; request: string },
  message: DnsRequest,
  settled: (found: ResourceRecord[]) => boolean,
): Promise<void> {
  const { zone, name, request } = at;
  try {
    await sendUpdate(target, message, zone, request);
  } catch (error) {
    const raced = error instanceof DnsAnswerError && RACED.includes(error.code);
    if (!raced && !(error instanceof DnsUnreachableError)) throw error;
    const now = await recordsAt(target, zone, name).catch(() => undefined);
    if (now && settled(now)) return;
    if (!raced) throw error;
    throw new DnsAnswerError(
      error.code,
      error.context,
      " (the TXT or CNAME records at the name changed after they were read, so nothing was written)",
    );
  }
}

/**
 * Publishes the DMARC record at its name, touching only what stands in its
 * place (`planAtName`): the name is read, and one update, guarded by
 * prerequisites on what was read, deletes those records one by one (class
 * NONE, with the data as the server holds it, so a TXT split into other
 * strings is matched too) and adds the record. Other records stay; when a
 * CNAME is declared and they exist, nothing is written and a
 * {@link NameInUseError} names them. `previous` is the record's value
 * before an update. Answers whether anything was written.
 */
export async function putDmarcRecord(
  target: DnsTarget,
  record: PublishedRecord,
  previous?: RecordText,
): Promise<"written" | "unchanged"> {
  const name = normalizeName(record.name);
  const zone = normalizeName(record.zone);
  const found = await recordsAt(target, zone, name);
  const plan = planAtName(found, record, previous);
  if (isPublished(plan, record, record.ttl)) return "unchanged";
  if (record.type === "CNAME" && plan.kept.length > 0) refuseCnameBeside(target, zone, plan.kept);
  const updates = [...plan.replaced.map(deletionOf), additionOf(name, record)];
  const message = updateMessage(zone, updates, unchangedSince(name, found));
  const settled = (now: ResourceRecord[]) => isPublished(planAtName(now, record, previous), record, record.ttl);
  await sendGuarded(target, { zone, name, request: `the update of ${name} (${record.type})` }, message, settled);
  return "written";
}

/**
 * Removes exactly this record ("delete an RR from an RRset", RFC 2136
 * §2.5.4), with its data as the server holds it, so a TXT split into other
 * strings goes too; other records at the name stay. A record already gone
 * writes nothing.
 */
export async function removeRecord(target: DnsTarget, record: Omit<PublishedRecord, "ttl">): Promise<void> {
  const name = normalizeName(record.name);
  const zone = normalizeName(record.zone);
  const ours = (await recordsAt(target, zone, name)).filter((found) => sameText(textOf(found), record));
  if (ours.length === 0) return;
  await sendUpdate(target, updateMessage(zone, ours.map(deletionOf)), zone, `the removal of ${name} (${record.type})`);
}
