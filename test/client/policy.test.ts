import { describe, expect, it } from "vitest";
import { createClient, DmarcConfigError } from "../../provider/src/client";
import { Pacer } from "../../provider/src/client/pacing";
import { REDACTED, redact, rememberSecret } from "../../provider/src/client/redaction";
import {
  backoffDelayMs,
  isRetryableStatus,
  requestedDelayMs,
  retryDelayMs,
  withinBounds,
} from "../../provider/src/client/retry";

const settings = { maxAttempts: 4, maxRetryElapsedMs: 10_000, retryBaseDelayMs: 100, retryMaxDelayMs: 1_000 };

describe("retry policy", () => {
  it("backs off exponentially with full jitter under a ceiling", () => {
    expect(backoffDelayMs(1, settings, () => 0.999)).toBe(99);
    expect(backoffDelayMs(3, settings, () => 0.999)).toBe(399);
    expect(backoffDelayMs(10, settings, () => 0.999)).toBe(999);
    expect(backoffDelayMs(10, settings, () => 0)).toBe(0);
  });

  it("honours the longer of Retry-After and retryAfterSeconds", () => {
    expect(requestedDelayMs({ "retry-after": "3" }, 1)).toBe(3000);
    expect(requestedDelayMs({}, 2.5)).toBe(2500);
    expect(requestedDelayMs({ "retry-after": "1" }, 4)).toBe(4000);
    const now = Date.parse("2024-01-01T00:00:00Z");
    expect(requestedDelayMs({ "retry-after": "Mon, 01 Jan 2024 00:00:05 GMT" }, undefined, now)).toBe(5000);
    expect(requestedDelayMs({ "retry-after": "soon" }, undefined)).toBeUndefined();
    expect(retryDelayMs(1, settings, 2000, () => 0.5)).toBe(2050);
  });

  it("retries gateway answers for every call and 500 only for repeatable ones", () => {
    for (const status of [429, 502, 503, 504]) expect(isRetryableStatus(status, false)).toBe(true);
    expect(isRetryableStatus(500, true)).toBe(true);
    expect(isRetryableStatus(500, false)).toBe(false);
    for (const status of [400, 401, 403, 404, 409, 422, 501]) expect(isRetryableStatus(status, true)).toBe(false);
  });

  it("stops at the attempt bound and at the elapsed-time bound", () => {
    expect(withinBounds(3, 0, 0, settings)).toBe(true);
    expect(withinBounds(4, 0, 0, settings)).toBe(false);
    expect(withinBounds(1, 9_000, 1_000, settings)).toBe(true);
    expect(withinBounds(1, 9_000, 1_001, settings)).toBe(false);
  });
});

describe("pacer", () => {
  it("never lets more than maxConcurrency through and serves waiters in order", async () => {
    const pacer = new Pacer({ requestsPerSecond: 0, maxConcurrency: 2 });
    const order: number[] = [];
    let active = 0;
    let peak = 0;
    const jobs = Array.from({ length: 8 }, async (_, index) => {
      const release = await pacer.acquire();
      order.push(index);
      active += 1;
      peak = Math.max(peak, active);
      await new Promise((resolve) => setImmediate(resolve));
      active -= 1;
      release();
    });
    await Promise.all(jobs);
    expect(peak).toBe(2);
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it("lets more through when the cap is raised", async () => {
    const pacer = new Pacer({ requestsPerSecond: 0, maxConcurrency: 1 });
    const first = await pacer.acquire();
    let secondIn = false;
    const second = pacer.acquire().then((release) => {
      secondIn = true;
      return release;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(secondIn).toBe(false);
    pacer.configure({ maxConcurrency: 2 });
    (await second)();
    expect(secondIn).toBe(true);
    first();
  });
});

describe("redaction", () => {
  it("removes remembered secrets, their encoded forms, and secret-shaped text", () => {
    rememberSecret("s3cr3t/value+with=chars");
    const text = [
      "plain s3cr3t/value+with=chars",
      `encoded ${encodeURIComponent("s3cr3t/value+with=chars")}`,
      "Authorization: Bearer abc.def.ghi",
      "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
      '{"client_secret":"xyz123456","access_token": "tok_98765432"}',
      "https://app.example.com/magic?token=abcdef123456",
    ].join("\n");
    const clean = redact(text);
    for (const leaked of ["s3cr3t", "abc.def.ghi", "MfKQ9r8", "xyz123456", "tok_98765432", "abcdef123456"]) {
      expect(clean).not.toContain(leaked);
    }
    expect(clean).toContain(REDACTED);
    expect(redact("organization org_123 not found")).toBe("organization org_123 not found");
    expect(redact("The bearer token is not valid.")).toBe("The bearer token is not valid.");
  });
});

describe("configuration", () => {
  const credentials = { clientId: "id", clientSecret: "secret-value-1" };

  it("refuses what it cannot run with", () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ ...credentials }, /baseUrl/],
      [{ baseUrl: "not a url", ...credentials }, /not an absolute URL/],
      [{ baseUrl: "http://api.example.com", ...credentials }, /plain http/],
      [{ baseUrl: "ftp://127.0.0.1", ...credentials }, /https/],
      [{ baseUrl: "https://user:pw@api.example.com", ...credentials }, /user name or password/],
      [{ baseUrl: "https://api.example.com" }, /No credentials/],
      [{ baseUrl: "https://api.example.com", clientId: "id" }, /together/],
      [{ baseUrl: "https://api.example.com", accessToken: "t0ken-value", ...credentials }, /not both/],
      [{ baseUrl: "https://api.example.com", ...credentials, maxAttempts: 0 }, /maxAttempts/],
      [{ baseUrl: "https://api.example.com", ...credentials, requestTimeoutMs: 1.5 }, /whole number/],
    ];
    for (const [options, message] of cases) {
      expect(() => createClient(options as never)).toThrow(DmarcConfigError);
      expect(() => createClient(options as never)).toThrow(message);
    }
  });

  it("accepts plain http to loopback hosts and https anywhere", () => {
    for (const baseUrl of ["http://127.0.0.1:1", "http://localhost:1", "http://[::1]:1", "https://api.example.com/"]) {
      expect(() => createClient({ baseUrl, ...credentials })).not.toThrow();
    }
  });

  it("hands out one client per address, credential and settings", () => {
    const a = createClient({ baseUrl: "https://api.example.com", ...credentials });
    expect(createClient({ baseUrl: "https://api.example.com/", ...credentials })).toBe(a);
    expect(createClient({ baseUrl: "https://api.example.com", ...credentials, clientSecret: "other-secret" })).not.toBe(
      a,
    );
    expect(createClient({ baseUrl: "https://api.example.com", ...credentials, maxAttempts: 2 })).not.toBe(a);
    expect(createClient({ baseUrl: "https://other.example.com", ...credentials })).not.toBe(a);
  });
});
