import { createHmac, timingSafeEqual } from "node:crypto";
import { type DecodedMessage, encodeName, encodeRecord, RecordClass, RecordType, readName, u16 } from "./message";

// Transaction signatures (RFC 8945): an HMAC over the message and the TSIG
// variables, carried as the last additional record; an answer's MAC also
// covers the request's MAC, so an answer cannot be replayed for another request.

/** The algorithms we sign with, by the name BIND, Knot and hashicorp/dns use, and Node's name of the hash. */
export const TSIG_ALGORITHMS = {
  "hmac-sha224": "sha224",
  "hmac-sha256": "sha256",
  "hmac-sha384": "sha384",
  "hmac-sha512": "sha512",
} as const;
export type TsigAlgorithm = keyof typeof TSIG_ALGORITHMS;

/** Algorithms a server may still offer that we refuse to sign with, and why. */
export const REFUSED_TSIG_ALGORITHMS: Readonly<Record<string, string>> = {
  "hmac-md5": "MD5 is broken and RFC 8945 deprecates hmac-md5",
  "hmac-md5.sig-alg.reg.int": "MD5 is broken and RFC 8945 deprecates hmac-md5",
  "hmac-sha1": "RFC 8945 recommends against hmac-sha1",
};

/** TSIG error codes (RFC 8945 §5.3), carried in the TSIG record of an answer. */
export const TsigErrorCode = { BADSIG: 16, BADKEY: 17, BADTIME: 18, BADTRUNC: 22 } as const;

/** How far apart the signer's and the verifier's clocks may be: RFC 8945 §10 recommends 300 seconds. */
export const FUDGE_SECONDS = 300;

export interface TsigKey {
  name: string;
  algorithm: TsigAlgorithm;
  /** The shared secret's bytes (the base64 of `tsig-keygen`, decoded). */
  secret: Buffer;
}

export interface TsigRecord {
  keyName: string;
  algorithm: string;
  /** Seconds since the epoch. */
  timeSigned: number;
  fudge: number;
  mac: Buffer;
  originalId: number;
  error: number;
  otherData: Buffer;
}

export type TsigCheck =
  | { status: "verified"; tsig: TsigRecord }
  | { status: "unsigned" }
  /** A TSIG error code: the server's, or ours when the signature does not verify. */
  | { status: "failed"; error: number; tsig: TsigRecord };

function u48(value: number): Buffer {
  const buffer = Buffer.alloc(6);
  buffer.writeUIntBE(value, 0, 6);
  return buffer;
}

function timeAndFudge(tsig: TsigRecord): Buffer {
  return Buffer.concat([u48(tsig.timeSigned), u16(tsig.fudge)]);
}

function encodeTsigData(tsig: TsigRecord): Buffer {
  return Buffer.concat([
    encodeName(tsig.algorithm),
    timeAndFudge(tsig),
    u16(tsig.mac.length),
    tsig.mac,
    u16(tsig.originalId),
    u16(tsig.error),
    u16(tsig.otherData.length),
    tsig.otherData,
  ]);
}

function decodeTsigData(keyName: string, data: Buffer): TsigRecord {
  const { name: algorithm, end } = readName(data);
  let offset = end;
  const timeSigned = data.readUIntBE(offset, 6);
  const fudge = data.readUInt16BE(offset + 6);
  const macLength = data.readUInt16BE(offset + 8);
  offset += 10;
  const mac = data.subarray(offset, offset + macLength);
  offset += macLength;
  const otherLength = data.readUInt16BE(offset + 4);
  return {
    keyName,
    algorithm,
    timeSigned,
    fudge,
    mac: Buffer.from(mac),
    originalId: data.readUInt16BE(offset),
    error: data.readUInt16BE(offset + 2),
    otherData: Buffer.from(data.subarray(offset + 6, offset + 6 + otherLength)),
  };
}

/** The TSIG variables (RFC 8945 §4.3.3): what the MAC covers besides the message. */
function variables(tsig: TsigRecord): Buffer {
  return Buffer.concat([
    encodeName(tsig.keyName),
    u16(RecordClass.ANY),
    Buffer.alloc(4),
    encodeName(tsig.algorithm),
    timeAndFudge(tsig),
    u16(tsig.error),
    u16(tsig.otherData.length),
    tsig.otherData,
  ]);
}

function computeMac(key: TsigKey, unsigned: Buffer, tsig: TsigRecord, requestMac: Buffer | undefined): Buffer {
  const hmac = createHmac(TSIG_ALGORITHMS[key.algorithm], key.secret);
  if (requestMac) hmac.update(Buffer.concat([u16(requestMac.length), requestMac]));
  hmac.update(unsigned);
  hmac.update(variables(tsig));
  return hmac.digest();
}

export interface SignOptions {
  /** Milliseconds since the epoch. */
  now: number;
  /** The request's MAC, when signing an answer. */
  requestMac?: Buffer;
  error?: number;
  otherData?: Buffer;
}

/** The message with its TSIG record appended, and the MAC (an answer to it is verified against it). */
export function signMessage(unsigned: Buffer, key: TsigKey, options: SignOptions): { bytes: Buffer; mac: Buffer } {
  const tsig: TsigRecord = {
    keyName: key.name,
    algorithm: key.algorithm,
    timeSigned: Math.floor(options.now / 1000),
    fudge: FUDGE_SECONDS,
    mac: Buffer.alloc(0),
    originalId: unsigned.readUInt16BE(0),
    error: options.error ?? 0,
    otherData: options.otherData ?? Buffer.alloc(0),
  };
  tsig.mac = computeMac(key, unsigned, tsig, options.requestMac);
  return { bytes: withTsigRecord(unsigned, tsig), mac: tsig.mac };
}

function withTsigRecord(unsigned: Buffer, tsig: TsigRecord): Buffer {
  const record = encodeRecord({
    name: tsig.keyName,
    type: RecordType.TSIG,
    class: RecordClass.ANY,
    ttl: 0,
    data: encodeTsigData(tsig),
  });
  const bytes = Buffer.concat([unsigned, record]);
  bytes.writeUInt16BE(unsigned.readUInt16BE(10) + 1, 10);
  return bytes;
}

/**
 * An answer refusing a request's signature (RFC 8945 §5.3.2): the request's
 * key and algorithm, the error, and no MAC, since the answerer cannot sign
 * with a key it does not have or that did not verify.
 */
export function withTsigError(unsigned: Buffer, request: TsigRecord, error: number, now: number): Buffer {
  const timeSigned = Math.floor(now / 1000);
  return withTsigRecord(unsigned, { ...request, timeSigned, mac: Buffer.alloc(0), error, otherData: Buffer.alloc(0) });
}

/** The TSIG record of a message: its last additional record, when that is one. */
export function tsigOf(message: DecodedMessage): TsigRecord | undefined {
  const last = message.additionals.at(-1);
  return last?.type === RecordType.TSIG ? decodeTsigData(last.name, last.data) : undefined;
}

/**
 * Checks a signed message: the key and algorithm are the ones expected, the
 * MAC is right, and the time signed is within the fudge of `now`. A TSIG
 * error the signer reports (the server's BADKEY, BADSIG, BADTIME) fails it.
 */
export function verifyMessage(
  bytes: Buffer,
  message: DecodedMessage,
  key: TsigKey,
  options: { now: number; requestMac?: Buffer },
): TsigCheck {
  const tsig = tsigOf(message);
  if (!tsig) return { status: "unsigned" };
  if (tsig.error !== 0) return { status: "failed", error: tsig.error, tsig };
  if (tsig.keyName !== key.name || tsig.algorithm !== key.algorithm) {
    return { status: "failed", error: TsigErrorCode.BADKEY, tsig };
  }
  const unsigned = Buffer.from(bytes.subarray(0, message.lastAdditionalOffset));
  unsigned.writeUInt16BE(tsig.originalId, 0);
  unsigned.writeUInt16BE(message.additionals.length - 1, 10);
  const expected = computeMac(key, unsigned, tsig, options.requestMac);
  if (tsig.mac.length !== expected.length || !timingSafeEqual(tsig.mac, expected)) {
    return { status: "failed", error: TsigErrorCode.BADSIG, tsig };
  }
  if (Math.abs(Math.floor(options.now / 1000) - tsig.timeSigned) > tsig.fudge) {
    return { status: "failed", error: TsigErrorCode.BADTIME, tsig };
  }
  return { status: "verified", tsig };
}

/** The server's clock in a BADTIME answer (RFC 8945 §5.2.3: its time in the other data), in seconds. */
export function serverTimeOf(tsig: TsigRecord): number | undefined {
  return tsig.otherData.length === 6 ? tsig.otherData.readUIntBE(0, 6) : undefined;
}
