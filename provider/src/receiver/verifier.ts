import type { WebhookEvent } from "../api";
import { parseEvent } from "./event";
import { type HeaderSource, readWebhookHeaders } from "./headers";
import { type Rejected, reject } from "./rejections";
import { signersFor } from "./secret";
import { signatureMatches } from "./signature";
import { freshness, parseTimestamp } from "./timestamp";

export interface VerifierOptions {
  /**
   * The webhook's secret as returned on creation (`whsec_...`). Pass several while a
   * regenerated secret rolls out; a delivery signed with any of them is accepted.
   * Never logged or echoed.
   */
  secret: string | readonly string[];
  /**
   * How far `webhook-timestamp` may be from this machine's clock, either way, in seconds.
   * Bounds how long a captured delivery can be replayed, so keep the store's TTL longer than this.
   * @defaultValue 300 (5 minutes, the Standard Webhooks recommendation)
   */
  toleranceSeconds?: number;
  /**
   * Largest body accepted, in bytes. The service's events are well under 2 KiB.
   * @defaultValue 262144 (256 KiB)
   */
  maxBodyBytes?: number;
}

/** One request as received: the raw body, byte for byte, and its headers. */
export interface WebhookDelivery {
  /** The body exactly as sent. A body that was parsed and re-serialised no longer matches its signature. */
  body: string | Uint8Array;
  headers: HeaderSource;
}

/** A delivery whose signature, timestamp and body all check out. */
export interface Verified {
  outcome: "verified";
  event: WebhookEvent;
  /** The sender's id for this message; retries of the same message keep it. */
  webhookId: string;
  /** When the sender signed this attempt. */
  timestamp: Date;
}

export type VerificationResult = Verified | Rejected;

export interface WebhookVerifier {
  /** Checks one delivery. Stateless: replays are caught by the receiver's store, not here. */
  verify(delivery: WebhookDelivery): VerificationResult;
  /** The size limit in force, so a transport can stop reading early. */
  readonly maxBodyBytes: number;
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value <= 0)
    throw new RangeError(`receiver: \`${name}\` must be a positive integer`);
  return value;
}

export function createWebhookVerifier(options: VerifierOptions): WebhookVerifier {
  const signers = signersFor(options.secret);
  const toleranceSeconds = positiveInteger("toleranceSeconds", options.toleranceSeconds ?? 300);
  const maxBodyBytes = positiveInteger("maxBodyBytes", options.maxBodyBytes ?? 256 * 1024);

  function verify(delivery: WebhookDelivery): VerificationResult {
    const bytes = typeof delivery.body === "string" ? Buffer.byteLength(delivery.body) : delivery.body.byteLength;
    if (bytes > maxBodyBytes) return reject("payload_too_large");

    const headers = readWebhookHeaders(delivery.headers);
    if (!headers) return reject("missing_headers");
    const timestampSeconds = parseTimestamp(headers.timestamp);
    if (timestampSeconds === undefined) return reject("invalid_timestamp");

    const payload = typeof delivery.body === "string" ? delivery.body : decode(delivery.body);
    // Signature before freshness, so a forgery is reported as a forgery whatever timestamp it claims.
    if (!signatureMatches(signers, { id: headers.id, timestampSeconds, payload }, headers.signature)) {
      return reject("invalid_signature");
    }
    const age = freshness(timestampSeconds, toleranceSeconds, Date.now());
    if (age !== "fresh") return reject(age === "too_old" ? "timestamp_too_old" : "timestamp_too_new");

    const parsed = parseEvent(payload);
    if (parsed.outcome === "rejected") return parsed;
    return {
      outcome: "verified",
      event: parsed.event,
      webhookId: headers.id,
      timestamp: new Date(timestampSeconds * 1000),
    };
  }

  return { verify, maxBodyBytes };
}

// A view, not a copy: bodies can be up to maxBodyBytes.
function decode(body: Uint8Array): string {
  return Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8");
}
