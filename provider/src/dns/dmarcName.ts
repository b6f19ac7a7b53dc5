import { normalizeName, RecordClass, RecordType, type ResourceRecord, readName, txtValue } from "./message";

// What stands at a `_dmarc` name and which of it a write replaces. The rule
// (ExternalDNS's too): touch only what stands in the DMARC record's place,
// which is our previous record, any DMARC policy (RFC 7489 §6.6.3: with two,
// receivers apply neither, so a second one is never left beside ours) and
// a CNAME; every other record at the name, a site verification say, stays.

/** A TXT value that receivers read as a DMARC policy record. */
export function isDmarcPolicy(value: string): boolean {
  return /^v\s*=\s*DMARC1\b/i.test(value);
}

/** A record as DMARC reads it: a TXT's character-strings joined, a CNAME's target. */
export interface RecordText {
  type: "TXT" | "CNAME";
  value: string;
}

export function textOf(record: ResourceRecord): RecordText {
  return record.type === RecordType.TXT
    ? { type: "TXT", value: txtValue(record.data) }
    : { type: "CNAME", value: readName(record.data).name };
}

/** Whether two records say the same, whichever way a TXT is split into strings. */
export function sameText(a: RecordText, b: RecordText): boolean {
  if (a.type !== b.type) return false;
  return a.type === "CNAME" ? normalizeName(a.value) === normalizeName(b.value) : a.value === b.value;
}

/** The records at the name split into those the write replaces and those it leaves. */
export interface NamePlan {
  replaced: ResourceRecord[];
  kept: ResourceRecord[];
}

/** `found`: the TXT and CNAME records at the name; `previous`: what this record was before (an update). */
export function planAtName(found: readonly ResourceRecord[], declared: RecordText, previous?: RecordText): NamePlan {
  const inPlace = (record: ResourceRecord) => {
    const text = textOf(record);
    return (
      text.type === "CNAME" ||
      isDmarcPolicy(text.value) ||
      sameText(text, declared) ||
      (previous !== undefined && sameText(text, previous))
    );
  };
  return { replaced: found.filter(inPlace), kept: found.filter((record) => !inPlace(record)) };
}

/** Whether the name already holds the declared record with its TTL, alone in its place: nothing to write. */
export function isPublished(plan: NamePlan, declared: RecordText, ttl: number): boolean {
  const [only, ...others] = plan.replaced;
  return only !== undefined && others.length === 0 && sameText(textOf(only), declared) && only.ttl === ttl;
}

/**
 * The prerequisites (RFC 2136 §2.4) that hold exactly when the TXT and CNAME
 * record sets at the name are still what was read: each set found must exist
 * with exactly these records ("RRset exists, value dependent", §2.4.2), each
 * type not found must not exist (§2.4.3). A record added, changed or removed
 * by someone else between the read and the update makes the server refuse
 * the whole update (NXRRSET or YXRRSET), so the deletions, chosen by value
 * from what was read, can never leave a policy that arrived meanwhile beside
 * ours or put a CNAME beside a TXT it did not see.
 */
export function unchangedSince(name: string, found: readonly ResourceRecord[]): ResourceRecord[] {
  return [RecordType.TXT, RecordType.CNAME].flatMap((type): ResourceRecord[] => {
    const set = found.filter((record) => record.type === type);
    if (set.length === 0) return [{ name, type, class: RecordClass.NONE, ttl: 0, data: Buffer.alloc(0) }];
    return set.map((record) => ({ name, type, class: RecordClass.IN, ttl: 0, data: record.data }));
  });
}

/** "Delete an RR from an RRset" (RFC 2136 §2.5.4): class NONE with the record's data as the server holds it. */
export function deletionOf(record: ResourceRecord): ResourceRecord {
  return { ...record, class: RecordClass.NONE, ttl: 0 };
}

/** How a record is named in a message: type, name, value and TTL, never a key. */
export function describeRecord(record: ResourceRecord): string {
  const text = textOf(record);
  return `${text.type} ${JSON.stringify(text.value)} at ${record.name} (TTL ${record.ttl})`;
}
