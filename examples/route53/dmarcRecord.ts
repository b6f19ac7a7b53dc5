import * as aws from "@pulumi/aws";
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
 * One entry of `records` for a TXT value. Route 53 wants each TXT value as
 * quoted character-strings of at most 255 octets, `"..." "..."`, with `"` and
 * `\` escaped. @pulumi/aws adds the outermost pair of quotes itself (and strips
 * it again when reading), so the entry carries only the inner ones: the
 * strings joined by `" "`. Quoting the whole value here as well would publish
 * a broken record that Pulumi would still see as unchanged.
 */
export function route53TxtValue(value: string): string {
  return characterStrings(value)
    .map((piece) => piece.replaceAll("\\", "\\\\").replaceAll('"', '\\"'))
    .join('" "');
}

/** The `records` of the Route 53 record for a setup record: the TXT value prepared for Route 53, or the CNAME target. */
function route53Records(record: DnsSetupRecord): string[] {
  return [record.recordType === "TXT" ? route53TxtValue(record.value) : record.value];
}

export interface PublishOptions {
  /** Seconds. Default 3600. */
  ttl?: number;
}

/**
 * Publishes a Domain's DMARC setup record in a Route 53 hosted zone. Name,
 * type and records all come from the Domain's `setupRecord`, so a change on
 * the service's side (a new policy text, TXT switched to CNAME) reaches DNS on
 * the next `pulumi up`.
 */
export function publishDmarcRecord(
  name: string,
  domain: Domain,
  hostedZoneId: pulumi.Input<string>,
  options: PublishOptions = {},
  opts?: pulumi.CustomResourceOptions,
): aws.route53.Record {
  const record = domain.setupRecord;
  return new aws.route53.Record(
    name,
    {
      zoneId: hostedZoneId,
      // The full host name: it lands in the hosted zone whatever the zone's apex, and matches what Route 53 answers.
      name: record.host,
      type: record.recordType,
      records: record.apply(route53Records),
      ttl: options.ttl ?? 3600,
    },
    opts,
  );
}
