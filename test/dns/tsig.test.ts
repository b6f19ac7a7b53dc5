import {
  decodeMessage,
  encodeMessage,
  Opcode,
  RecordClass,
  RecordType,
  requestMessage,
  signMessage,
  TsigErrorCode,
  type TsigKey,
  txtData,
  txtValue,
  verifyMessage,
} from "pulumi-dmarc-partner/dns";
import { describe, expect, it } from "vitest";

// TSIG (RFC 8945) signing and verification, and the TXT split, on their own;
// test/dns/record.test.ts checks them against BIND and Knot.

const key: TsigKey = { name: "dmarc-update", algorithm: "hmac-sha512", secret: Buffer.alloc(64, 3) };
const now = Date.parse("2026-01-01T00:00:00Z");
const query = encodeMessage({
  ...requestMessage(Opcode.QUERY, { name: "_dmarc.acme.example", type: RecordType.TXT, class: RecordClass.IN }),
  id: 4242,
});

function verify(bytes: Buffer, at = now, withKey = key) {
  return verifyMessage(bytes, decodeMessage(bytes), withKey, { now: at });
}

describe("TSIG", () => {
  it("verifies what it signed, within the fudge of five minutes", () => {
    const { bytes } = signMessage(query, key, { now });
    expect(verify(bytes).status).toBe("verified");
    expect(verify(bytes, now + 299_000).status).toBe("verified");
    expect(verify(bytes, now - 301_000)).toMatchObject({ status: "failed", error: TsigErrorCode.BADTIME });
  });

  it("tells a changed message (BADSIG) from another key (BADKEY)", () => {
    const { bytes } = signMessage(query, key, { now });
    const changed = Buffer.from(bytes);
    changed[20] = (changed[20] ?? 0) ^ 1;
    expect(verify(changed)).toMatchObject({ status: "failed", error: TsigErrorCode.BADSIG });
    expect(verify(bytes, now, { ...key, secret: Buffer.alloc(64, 4) })).toMatchObject({ error: TsigErrorCode.BADSIG });
    expect(verify(bytes, now, { ...key, name: "other-key" })).toMatchObject({ error: TsigErrorCode.BADKEY });
    expect(verify(query).status).toBe("unsigned");
  });

  it("binds an answer to its request's MAC", () => {
    const request = signMessage(query, key, { now });
    const answer = Buffer.from(query);
    answer.writeUInt16BE(0x8400, 2);
    const signed = signMessage(answer, key, { now, requestMac: request.mac }).bytes;
    const decoded = decodeMessage(signed);
    expect(verifyMessage(signed, decoded, key, { now, requestMac: request.mac }).status).toBe("verified");
    const other = signMessage(query, key, { now: now + 1000 });
    expect(verifyMessage(signed, decoded, key, { now, requestMac: other.mac })).toMatchObject({
      error: TsigErrorCode.BADSIG,
    });
  });
});

describe("TXT data", () => {
  it("splits a value into 255-byte strings and joins them back", () => {
    const value = "v=DMARC1; ".padEnd(600, "x");
    const data = txtData(value);
    expect([data[0], data[256], data[512]]).toEqual([255, 255, 90]);
    expect(txtValue(data)).toBe(value);
  });
});
