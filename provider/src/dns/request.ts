import { randomInt } from "node:crypto";
import { DnsAnswerError, type DnsRequestContext, Rcode } from "./errors";
import { type DecodedMessage, DnsFormatError, type DnsMessage, decodeMessage, encodeMessage } from "./message";
import { DEFAULT_EXCHANGE, type DnsServer, describeServer, type ExchangeOptions, exchange } from "./transport";
import { signMessage, type TsigKey, verifyMessage } from "./tsig";

/** Where requests go and how they are signed. */
export interface DnsTarget {
  server: DnsServer;
  key: TsigKey;
  exchange?: ExchangeOptions;
}

/** A message without its id: each request gets a fresh random one. */
export type DnsRequest = Omit<DnsMessage, "id">;

/** What a message about a request to the target names. */
export function requestContext(
  target: DnsTarget,
  describe: Omit<DnsRequestContext, "server" | "keyName">,
): DnsRequestContext {
  return { ...describe, server: describeServer(target.server), keyName: target.key.name };
}

/**
 * Signs the request with the target's key, sends it, and answers the
 * decoded answer once its signature verifies and its RCODE is NOERROR (or
 * one of `accepted`); any other outcome is a {@link DnsAnswerError} naming
 * the server, the zone and the key.
 */
export async function signedRequest(
  target: DnsTarget,
  request: DnsRequest,
  describe: Omit<DnsRequestContext, "server" | "keyName">,
  accepted: readonly number[] = [],
): Promise<DecodedMessage> {
  const context = requestContext(target, describe);
  const signed = signMessage(encodeMessage({ ...request, id: randomInt(0x10000) }), target.key, { now: Date.now() });
  const bytes = await exchange(target.server, signed.bytes, target.exchange ?? DEFAULT_EXCHANGE);
  let answer: DecodedMessage;
  try {
    answer = decodeMessage(bytes);
  } catch (error) {
    const reason = error instanceof DnsFormatError || error instanceof RangeError ? error.message : String(error);
    throw new DnsAnswerError(Rcode.FORMERR, context, ` (its answer could not be read: ${reason})`);
  }
  const check = verifyMessage(bytes, answer, target.key, { now: Date.now(), requestMac: signed.mac });
  if (check.status === "failed") throw new DnsAnswerError(check.error, context);
  if (answer.rcode !== Rcode.NOERROR && !accepted.includes(answer.rcode)) {
    throw new DnsAnswerError(answer.rcode, context);
  }
  // An answer that reports success must prove it came from the key's holder.
  if (check.status === "unsigned") {
    throw new DnsAnswerError(
      Rcode.NOTAUTH,
      context,
      " (its answer was not signed, so it cannot be trusted; is something between us and the server answering instead?)",
    );
  }
  return answer;
}
