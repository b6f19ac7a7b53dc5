import * as cloudflare from "@pulumi/cloudflare";
import type * as pulumi from "@pulumi/pulumi";
import type { DnsSetupRecord, Domain } from "pulumi-dmarc-partner";

/** DNS caps one character-string of a TXT record at 255 octets (RFC 1035, section 3.3). */
const MAX_STRING_OCTETS = 255;

/** Splits text into pieces of at most 255 UTF-8 octets, never inside a character. */
function characterStrings(text: string): string[] {
  const pieces: string[] = [];
  let piece = "";
  for (const character of text) {
    if (Buffer.byteLength(piece + character) > MAX_STRING_OCTETS) {
      pieces.push(piece);
      piece = "";
    }
    piece += character;
  }
  pieces.push(piece);
  return pieces;
}

/**
 * TXT content as Cloudflare's API wants it: quoted character-strings, each of
 * at most 255 octets. Cloudflare would split a longer one itself, but then the
 * content it answers differs from the content declared and every refresh
 * would show a change; splitting here keeps the two equal.
 */
export function txtContent(value: string): string {
  return characterStrings(value)
    .map((piece) => `"${piece.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`)
    .join(" ");
}

/** The `content` of the Cloudflare record for a setup record: quoted policy text, or the CNAME target as it is. */
function cloudflareContent(record: DnsSetupRecord): string {
  return record.recordType === "TXT" ? txtContent(record.value) : record.value;
}

export interface PublishOptions {
  /** Seconds; 1 means Cloudflare's automatic TTL. Default 3600. */
  ttl?: number;
}

/**
 * Publishes a Domain's DMARC setup record in a Cloudflare zone. Name, type and
 * content all come from the Domain's `setupRecord`, so a change on the
 * service's side (a new policy text, TXT switched to CNAME) reaches DNS on the
 * next `pulumi up`.
 */
export function publishDmarcRecord(
  name: string,
  domain: Domain,
  zoneId: pulumi.Input<string>,
  options: PublishOptions = {},
  opts?: pulumi.CustomResourceOptions,
): cloudflare.DnsRecord {
  const record = domain.setupRecord;
  return new cloudflare.DnsRecord(
    name,
    {
      zoneId,
      // The full host name, not the zone-relative `name`: Cloudflare answers the full name, and
      // @pulumi/cloudflare 6 compares the declared name with that answer on every refresh.
      name: record.host,
      type: record.recordType,
      content: record.apply(cloudflareContent),
      ttl: options.ttl ?? 3600,
      // A CNAME must resolve to the service's own host for the service to answer, not to Cloudflare's edge.
      proxied: false,
      comment: "DMARC record of the DMARC management service, managed by Pulumi",
    },
    opts,
  );
}
