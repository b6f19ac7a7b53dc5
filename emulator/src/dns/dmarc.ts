import type { DomainPolicy, SetupRecord, SetupRecordType } from "pulumi-dmarc-partner/api";

/** The emulated service's own DNS names; `.test` is reserved and never resolves on the internet. */
export const SERVICE_DOMAIN = "dmarc-emulator.test";
const RUA_HOST = `rua.${SERVICE_DOMAIN}`;
const RECORD_HOST_SUFFIX = `.records.${SERVICE_DOMAIN}`;

/** Aggregate reports of an organisation go to an address of its own, so verification can tell organisations apart. */
function ruaAddress(organizationId: string): string {
  return `${organizationId}@${RUA_HOST}`;
}

export function dmarcHost(domain: string): string {
  return `_dmarc.${domain}`;
}

export function dmarcRecordValue(organizationId: string): string {
  return `v=DMARC1; p=none; rua=mailto:${ruaAddress(organizationId)}; fo=1`;
}

/** The service host a CNAME at `_dmarc.<domain>` points to; the service serves the TXT record there. */
function recordHost(organizationId: string, domain: string): string {
  return `${domain}.${organizationId.replaceAll("_", "-")}${RECORD_HOST_SUFFIX}`;
}

/** Inverse of `recordHost`. */
export function parseRecordHost(name: string): { organizationId: string; domain: string } | undefined {
  if (!name.endsWith(RECORD_HOST_SUFFIX)) return undefined;
  const labels = name.slice(0, -RECORD_HOST_SUFFIX.length).split(".");
  const organizationLabel = labels.pop();
  if (!organizationLabel || labels.length < 2) return undefined;
  return { organizationId: organizationLabel.replace("-", "_"), domain: labels.join(".") };
}

export function setupRecord(organizationId: string, domain: string, type: SetupRecordType): SetupRecord {
  return type === "TXT"
    ? { host: dmarcHost(domain), type: "txt", value: dmarcRecordValue(organizationId) }
    : { host: dmarcHost(domain), type: "cname", value: recordHost(organizationId, domain) };
}

export type Verdict =
  | { status: "success"; policy: DomainPolicy }
  | { status: "failed"; policy: DomainPolicy; reason: string }
  /** No DMARC record (yet): propagation may still be under way. */
  | { status: "absent"; reason: string };

const RUA_NOT_FOUND = "RUA address not found";

function tagsOf(record: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of record.split(";")) {
    const separator = part.indexOf("=");
    if (separator > 0) tags.set(part.slice(0, separator).trim().toLowerCase(), part.slice(separator + 1).trim());
  }
  return tags;
}

/** Judges the TXT strings found at `_dmarc.<domain>` against the organisation's reporting address. */
export function judge(records: string[], domain: string, organizationId: string): Verdict {
  const dmarc = records.filter((record) => /^v\s*=\s*DMARC1\s*(;|$)/.test(record.trim()));
  if (dmarc.length === 0) return { status: "absent", reason: `no DMARC record found at ${dmarcHost(domain)}` };
  if (dmarc.length > 1) {
    return { status: "failed", policy: "invalid", reason: `${dmarcHost(domain)} holds more than one DMARC record` };
  }
  const tags = tagsOf(dmarc[0] ?? "");
  const policy = tags.get("p")?.toLowerCase();
  if (policy !== "none" && policy !== "quarantine" && policy !== "reject") {
    return { status: "failed", policy: "invalid", reason: "the DMARC record has no valid p= policy" };
  }
  const expected = `mailto:${ruaAddress(organizationId)}`.toLowerCase();
  const addresses = (tags.get("rua") ?? "").split(",").map((uri) => uri.trim().replace(/!.*$/, "").toLowerCase());
  if (!addresses.includes(expected)) return { status: "failed", policy, reason: RUA_NOT_FOUND };
  return { status: "success", policy };
}
