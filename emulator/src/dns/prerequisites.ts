import { normalizeName, Rcode, RecordClass, RecordType, type ResourceRecord } from "pulumi-dmarc-partner/dns";
import type { ZoneRecord } from "../store";
import { isInside, RECORD_TYPES, recordValue } from "./updates";

// The prerequisite section of an RFC 2136 message checked against the
// simulated zone's records (§3.2), in the RFC's order, so a guarded update
// is refused here with the RCODE BIND and Knot answer: a name or record set
// that must (not) exist, or a record set that must hold exactly the given
// records ("value dependent", compared as DMARC reads values: a TXT's
// strings joined).

/** The record set a prerequisite names, as `name type`. */
function setKey(name: string, type: number): string {
  return `${name} ${type}`;
}

function holds(records: ReadonlyMap<string, ZoneRecord>, name: string, type: number): ZoneRecord | undefined {
  const record = records.get(name);
  return record && record.type === RECORD_TYPES[type] ? record : undefined;
}

/** The RCODE of one prerequisite of class ANY or NONE; undefined when it holds. */
function existenceRefusal(
  records: ReadonlyMap<string, ZoneRecord>,
  zone: string,
  rr: ResourceRecord,
): number | undefined {
  const name = normalizeName(rr.name);
  const inUse = name === zone || records.has(name);
  if (rr.class === RecordClass.ANY && rr.type === RecordType.ANY) return inUse ? undefined : Rcode.NXDOMAIN;
  if (rr.class === RecordClass.ANY) return holds(records, name, rr.type) ? undefined : Rcode.NXRRSET;
  if (rr.type === RecordType.ANY) return inUse ? Rcode.YXDOMAIN : undefined;
  return holds(records, name, rr.type) ? Rcode.YXRRSET : undefined;
}

function sameSet(record: ZoneRecord | undefined, values: ReadonlySet<string>): boolean {
  if (!record) return false;
  const held = new Set(record.values.map((value) => (record.type === "CNAME" ? normalizeName(value) : value)));
  return held.size === values.size && [...values].every((value) => held.has(value));
}

/** Checks the prerequisites: the refusing RCODE, or undefined when the update may be applied. */
export function prerequisiteRefusal(
  records: ReadonlyMap<string, ZoneRecord>,
  zone: string,
  prerequisites: readonly ResourceRecord[],
): number | undefined {
  // Value-dependent prerequisites, gathered into the record sets they describe.
  const expected = new Map<string, { name: string; type: number; values: Set<string> }>();
  for (const rr of prerequisites) {
    const name = normalizeName(rr.name);
    if (rr.ttl !== 0) return Rcode.FORMERR;
    if (!isInside(name, zone)) return Rcode.NOTZONE;
    if (rr.class === RecordClass.ANY || rr.class === RecordClass.NONE) {
      if (rr.data.length !== 0) return Rcode.FORMERR;
      const refused = existenceRefusal(records, zone, rr);
      if (refused !== undefined) return refused;
      continue;
    }
    if (rr.class !== RecordClass.IN) return Rcode.FORMERR;
    const type = RECORD_TYPES[rr.type];
    // A type this zone never holds cannot match.
    if (!type) return Rcode.NXRRSET;
    const set = expected.get(setKey(name, rr.type)) ?? { name, type: rr.type, values: new Set<string>() };
    set.values.add(recordValue(type, rr.data));
    expected.set(setKey(name, rr.type), set);
  }
  for (const { name, type, values } of expected.values()) {
    if (!sameSet(holds(records, name, type), values)) return Rcode.NXRRSET;
  }
  return undefined;
}
