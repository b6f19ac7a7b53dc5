import { timingSafeEqual } from "node:crypto";
import type { Webhook } from "standardwebhooks";

/**
 * True when one of the space-separated `v1,<base64>` signatures matches the body under one of the secrets.
 *
 * The HMAC comes from the package's `sign`, not its `verify`: `verify` hard-codes a
 * 5-minute window and parses JSON itself, and the receiver needs its own tolerance
 * and a distinct reason for each failure.
 */
export function signatureMatches(
  signers: readonly Webhook[],
  message: { id: string; timestampSeconds: number; payload: string },
  signatureHeader: string,
): boolean {
  const offered = signatureHeader
    .split(" ")
    .filter((entry) => entry.startsWith("v1,"))
    .map((entry) => Buffer.from(entry));
  if (offered.length === 0) return false;
  const signedAt = new Date(message.timestampSeconds * 1000);
  return signers.some((signer) => {
    const expected = Buffer.from(signer.sign(message.id, signedAt, message.payload));
    return offered.some((candidate) => candidate.length === expected.length && timingSafeEqual(candidate, expected));
  });
}
