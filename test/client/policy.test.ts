import { describe, expect, it } from "vitest";
import { CLIENT_DEFAULTS, createClient, DmarcConfigError, pacingFor } from "../../provider/src/client";
import { Pacer } from "../../provider/src/client/pace/pacing";
import { REDACTED, redact, rememberSecret } from "../../provider/src/client/redaction";
import {
  backoffDelayMs,
  boundedDelayMs,
  isRetryableStatus,
  RATE_LIMIT_WINDOW_MS,
  rateLimitDelayMs,
  requestedDelayMs,
  retryDelayMs,
  type WaitReason,
  waitReasonOf,
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
    expect(retryDelayMs(1, settings, { kind: "requested", ms: 2000 }, () => 0.5)).toBe(2050);
  });

  it("tells a wait asked for from a 429 without a hint and from a fault", () => {
    expect(waitReasonOf(429, 3000)).toEqual({ kind: "requested", ms: 3000 });
    expect(waitReasonOf(503, 3000)).toEqual({ kind: "requested", ms: 3000 });
    expect(waitReasonOf(429, undefined)).toEqual({ kind: "rateLimited" });
    expect(waitReasonOf(503, undefined)).toEqual({ kind: "fault" });
  });

  it("waits out a 429 without a hint from one second up to the whole window", () => {
    expect(rateLimitDelayMs(1, () => 0)).toBe(500);
    expect(rateLimitDelayMs(1, () => 0.999)).toBe(999);
    expect(rateLimitDelayMs(6, () => 0)).toBe(16_000);
    expect(rateLimitDelayMs(20, () => 0.999)).toBeLessThanOrEqual(RATE_LIMIT_WINDOW_MS);
    expect(rateLimitDelayMs(20, () => 0)).toBe(RATE_LIMIT_WINDOW_MS / 2);
  });

  it.each([
    ["the shortest", () => 0],
    ["the middle", () => 0.5],
    ["the longest", () => 0.999],
  ])("with %s waits, outlasts a whole window refused without a hint within the default bounds", (_name, random) => {
    // A call refused by every try that starts within a minute of the first refusal still gets a try after it.
    const reason: WaitReason = { kind: "rateLimited" };
    let elapsed = 0;
    let attempts = 1;
    while (elapsed < RATE_LIMIT_WINDOW_MS) {
      const delay = boundedDelayMs(
        attempts,
        elapsed,
        retryDelayMs(attempts, CLIENT_DEFAULTS, reason, random),
        reason,
        CLIENT_DEFAULTS,
      );
      expect(delay).toBeDefined();
      elapsed += delay ?? Number.POSITIVE_INFINITY;
      attempts += 1;
    }
    expect(attempts).toBeLessThanOrEqual(CLIENT_DEFAULTS.maxAttempts);
    expect(elapsed).toBeLessThanOrEqual(CLIENT_DEFAULTS.maxRetryElapsedMs);
  });

  it("retries gateway answers for every call and 500 only for repeatable ones", () => {
    for (const status of [429, 502, 503, 504]) expect(isRetryableStatus(status, false)).toBe(true);
    expect(isRetryableStatus(500, true)).toBe(true);
    expect(isRetryableStatus(500, false)).toBe(false);
    for (const status of [400, 401, 403, 404, 409, 422, 501]) expect(isRetryableStatus(status, true)).toBe(false);
  });

  it("stops at the attempt bound and at the elapsed-time bound", () => {
    const fault: WaitReason = { kind: "fault" };
    expect(boundedDelayMs(3, 0, 0, fault, settings)).toBe(0);
    expect(boundedDelayMs(4, 0, 0, fault, settings)).toBeUndefined();
    expect(boundedDelayMs(1, 9_000, 1_000, fault, settings)).toBe(1_000);
    expect(boundedDelayMs(1, 9_000, 1_001, fault, settings)).toBeUndefined();
  });

  it("cuts a wait of its own choosing to what the time bound leaves, never one the service asked for", () => {
    const guessed: WaitReason = { kind: "rateLimited" };
    expect(boundedDelayMs(2, 6_000, 8_000, guessed, settings)).toBe(4_000);
    expect(boundedDelayMs(2, 9_500, 8_000, guessed, settings)).toBeUndefined();
    expect(boundedDelayMs(2, 6_000, 8_000, { kind: "requested", ms: 8_000 }, settings)).toBeUndefined();
  });
});

describe("pacer", () => {
  const unpaced = { requestsPerMinute: 0, source: "a test", notice: () => {} };

  it("never lets more than maxConcurrency through and serves waiters in order", async () => {
    const pacer = new Pacer({ ...unpaced, maxConcurrency: 2 });
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
    const pacer = new Pacer({ ...unpaced, maxConcurrency: 1 });
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

  it("paces at 95% of the published limit by default, unless the address is loopback", () => {
    const paced = (baseUrl: string, extra: Record<string, number> = {}) =>
      pacingFor({ baseUrl, ...credentials, ...extra }).requestsPerMinute;
    expect(paced("https://api.example.com")).toBe(57);
    expect(pacingFor({ baseUrl: "https://api.example.com", ...credentials }).source).toMatch(/published 60 a minute/);
    for (const loopback of ["http://127.0.0.1:4010", "http://127.8.9.10:1", "http://localhost:1", "http://[::1]:1"]) {
      expect(paced(loopback)).toBe(0);
    }
    expect(paced("https://api.example.com", { requestsPerMinute: 0 })).toBe(0);
    expect(paced("http://127.0.0.1:4010", { requestsPerMinute: 60 })).toBe(60);
    expect(paced("https://api.example.com", { requestsPerSecond: 0.5 })).toBe(30);
    // The fleet writes a shard's share per minute; an older per-second setting beside it gives way.
    expect(paced("https://api.example.com", { requestsPerSecond: 0.5, requestsPerMinute: 12 })).toBe(12);
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
