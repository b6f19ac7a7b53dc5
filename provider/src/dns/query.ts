import { DnsAnswerError, Rcode } from "./errors";
import { normalizeName, Opcode, RecordClass, RecordType, type ResourceRecord, requestMessage } from "./message";
import { type DnsTarget, requestContext, signedRequest } from "./request";

// Questions asked of the authoritative server itself, never of a recursive
// resolver: what it serves is the truth a refresh compares with, with no
// cache in between.

function question(name: string, type: number) {
  return requestMessage(Opcode.QUERY, { name, type, class: RecordClass.IN });
}

/** The records of these types the server holds at the name (none when the name does not exist). */
export async function authoritativeRecords(
  target: DnsTarget,
  zone: string,
  name: string,
  types: readonly number[],
): Promise<ResourceRecord[]> {
  const owner = normalizeName(name);
  const found: ResourceRecord[] = [];
  for (const type of types) {
    const describe = { zone, request: `the query for ${owner}` };
    const answer = await signedRequest(target, question(owner, type), describe, [Rcode.NXDOMAIN]);
    if (!answer.authoritative) throw new DnsAnswerError(Rcode.NOTAUTH, requestContext(target, describe));
    found.push(...answer.answers.filter((record) => record.name === owner && record.type === type));
  }
  return found;
}

/**
 * The zone the name is in, as the server sees it: the owner of the SOA record
 * in the answer (the name is the zone's apex) or in the authority section.
 */
export async function zoneOf(target: DnsTarget, name: string): Promise<string> {
  const owner = normalizeName(name);
  const describe = { zone: "(to be found)", request: `the SOA query for ${owner}` };
  const answer = await signedRequest(target, question(owner, RecordType.SOA), describe, [Rcode.NXDOMAIN]);
  const soa = [...answer.answers, ...answer.authorities].find((record) => record.type === RecordType.SOA);
  if (!answer.authoritative || !soa) {
    throw new DnsAnswerError(Rcode.NOTAUTH, requestContext(target, describe), `: it holds no zone containing ${owner}`);
  }
  return soa.name;
}
