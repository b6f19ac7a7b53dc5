import {
  normalizeName,
  Rcode,
  RecordClass,
  RecordType,
  type ResourceRecord,
  readName,
  txtValue,
} from "pulumi-dmarc-partner/dns";
import type { ZoneRecord } from "../store";

// The update section of an RFC 2136 message applied to the simulated zone's
// records (§3.4.2): adds, deletions of a record set, of a whole name, or of
// one record. The zone keeps one record type per name, so a CNAME and a TXT
// never share one: an addition that would make them do is ignored, as the RFC
// says of a CNAME beside other data. All or nothing: the records are changed
// only when every update is acceptable.

/** The record types the zone holds, by type code. */
export const RECORD_TYPES: Readonly<Record<number, ZoneRecord["type"]>> = {
  [RecordType.TXT]: "TXT",
  [RecordType.CNAME]: "CNAME",
};

export function isInside(name: string, zone: string): boolean {
  return name === zone || name.endsWith(`.${zone}`);
}

/** A record's value as the zone keeps it: a TXT's strings joined, a CNAME's target. */
export function recordValue(type: ZoneRecord["type"], data: Buffer): string {
  return type === "TXT" ? txtValue(data) : readName(data).name;
}

/** Checks every update first: the RCODE refusing the message, or undefined when all may be applied. */
function refusal(zone: string, updates: readonly ResourceRecord[]): number | undefined {
  for (const update of updates) {
    if (!isInside(update.name, zone)) return Rcode.NOTZONE;
    const deletesName = update.class === RecordClass.ANY && update.type === RecordType.ANY;
    if (!deletesName && RECORD_TYPES[update.type] === undefined) return Rcode.REFUSED;
    if (![RecordClass.IN, RecordClass.ANY, RecordClass.NONE].includes(update.class as 1)) return Rcode.FORMERR;
  }
  return undefined;
}

function applyOne(records: Map<string, ZoneRecord>, update: ResourceRecord): void {
  const name = normalizeName(update.name);
  const current = records.get(name);
  const type = RECORD_TYPES[update.type];
  if (update.class === RecordClass.ANY) {
    if (update.type === RecordType.ANY || current?.type === type) records.delete(name);
    return;
  }
  if (!type) return;
  const value = recordValue(type, update.data);
  if (update.class === RecordClass.NONE) {
    if (current?.type !== type) return;
    const values = current.values.filter((existing) => existing !== value);
    if (values.length === 0) records.delete(name);
    else records.set(name, { ...current, values });
    return;
  }
  if (!current) {
    records.set(name, { name, type, values: [value], ttl: update.ttl });
  } else if (current.type === type) {
    // A CNAME set holds one record; a TXT set gains the value once. Its TTL is the newest addition's.
    const values = type === "CNAME" ? [value] : [...new Set([...current.values, value])];
    records.set(name, { ...current, values, ttl: update.ttl });
  }
}

/** Applies the updates to the records in place, or changes nothing and answers the refusing RCODE. */
export function applyUpdates(
  records: Map<string, ZoneRecord>,
  zone: string,
  updates: readonly ResourceRecord[],
): number {
  const refused = refusal(zone, updates);
  if (refused !== undefined) return refused;
  // Each name's record after the updates so far; undefined once deleted.
  const touched = new Map<string, ZoneRecord | undefined>();
  for (const update of updates) {
    const name = normalizeName(update.name);
    const current = touched.has(name) ? touched.get(name) : records.get(name);
    const scratch = new Map(current ? [[name, current]] : []);
    applyOne(scratch, update);
    touched.set(name, scratch.get(name));
  }
  for (const [name, record] of touched) {
    if (record) records.set(name, record);
    else records.delete(name);
  }
  return Rcode.NOERROR;
}
