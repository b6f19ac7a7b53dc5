import type { ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { type ClientOptions, closeClients, createClient, DmarcApiError } from "../../provider/src/client";
import { failure, json, type Loopback, ORGANIZATION, type SeenRequest, startLoopback, tokenAnswer } from "./loopback";

// The client's decisions on 429 answers and its pacing, against a real
// loopback server that answers as the service may: the published 429
// example carries no hint at all; the guides name Retry-After and
// details.retryAfterSeconds.

const servers: Loopback[] = [];
afterEach(async () => {
  await closeClients();
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** The body of the published 429 example: no retryAfterSeconds, no Retry-After header. */
const PUBLISHED_429 = { error: "RateLimitExceeded", message: "Too many requests." };

/** When each API request arrived (ms since the epoch), in order. */
interface Timed {
  server: Loopback;
  arrivals: number[];
}

/** A server whose API answers come from `answer(n)`, n counting API requests from 1. */
async function serve(answer: (n: number, request: SeenRequest, response: ServerResponse) => void): Promise<Timed> {
  const arrivals: number[] = [];
  const server = await startLoopback((request, response) => {
    if (request.path === "/auth/token") return tokenAnswer(response, "tok-R-12345678");
    arrivals.push(Date.now());
    answer(arrivals.length, request, response);
  });
  servers.push(server);
  return { server, arrivals };
}

function clientFor(timed: Timed, options: Partial<ClientOptions> = {}) {
  const notices: string[] = [];
  const client = createClient({
    baseUrl: timed.server.url,
    clientId: "partner-1",
    clientSecret: "client-secret-Rl81vX0pLm",
    requestTimeoutMs: 5_000,
    notice: (line) => notices.push(line),
    ...options,
  });
  return { client, notices };
}

const gaps = (arrivals: number[]) => arrivals.slice(1).map((time, index) => time - (arrivals[index] ?? time));

describe("a 429 without a hint", () => {
  it("is waited out, longer each time, with a line saying how long and why", async () => {
    const timed = await serve((n, _request, response) =>
      n <= 3 ? json(response, 429, PUBLISHED_429) : json(response, 201, ORGANIZATION),
    );
    const { client, notices } = clientFor(timed);
    await expect(client.createOrganization({ name: "Acme" })).resolves.toEqual(ORGANIZATION);
    expect(timed.arrivals).toHaveLength(4);
    // Waits of 0.5 to 1 s, 1 to 2 s, 2 to 4 s: the start of the schedule that reaches a whole minute.
    const [first = 0, second = 0, third = 0] = gaps(timed.arrivals);
    expect(first).toBeGreaterThanOrEqual(500);
    expect(second).toBeGreaterThanOrEqual(1_000);
    expect(third).toBeGreaterThanOrEqual(2_000);
    expect(notices).toHaveLength(3);
    for (const line of notices) {
      expect(line).toMatch(
        /^dmarc: rate limited: POST \/v1\/organizations answered 429 with no Retry-After or retryAfterSeconds, so the client waits out the limit's window; waiting \d+(\.\d)? s \(attempt \d of at most 10, /,
      );
    }
  });

  it("is retried until the time bound, the last wait cut to what the bound leaves, then fails naming the knobs", async () => {
    const timed = await serve((_n, _request, response) => json(response, 429, PUBLISHED_429));
    const { client, notices } = clientFor(timed, { maxRetryElapsedMs: 2_500 });
    const error = await failure(client.listPlans());
    expect(error).toBeInstanceOf(DmarcApiError);
    expect(error).toMatchObject({ status: 429, code: "RateLimitExceeded" });
    expect(error.message).toContain("What to do: the service kept rate limiting");
    expect(error.message).toMatch(/Lower requestsPerMinute .* raise maxRetryElapsedMs and maxAttempts/);
    // 0.5-1 s, then 1-2 s, then whatever is left of 2.5 s (at least a second, or no more tries).
    const spent = (timed.arrivals.at(-1) ?? 0) - (timed.arrivals[0] ?? 0);
    // Bounded by the 2.5 s given, not the default 120 s; the rest is room for a busy machine.
    expect(spent).toBeLessThanOrEqual(2_500 + 2_500);
    expect(timed.arrivals.length).toBeGreaterThanOrEqual(3);
    expect(notices.at(-1)).toMatch(/not waiting .* beyond the bounds/);
  });
});

describe("a 429 with a hint", () => {
  it("waits the seconds of Retry-After", async () => {
    const timed = await serve((n, _request, response) =>
      n === 1 ? json(response, 429, PUBLISHED_429, { "retry-after": "1" }) : json(response, 200, ORGANIZATION),
    );
    const { client, notices } = clientFor(timed);
    await expect(client.getOrganization(ORGANIZATION.id)).resolves.toEqual(ORGANIZATION);
    expect(gaps(timed.arrivals)[0]).toBeGreaterThanOrEqual(1_000);
    expect(notices).toEqual([expect.stringMatching(/answered 429 asking to wait 1\.0 s; waiting 1\.\d s/)]);
  });

  it("comes back no sooner than the HTTP date of Retry-After", async () => {
    let until = 0;
    const timed = await serve((n, _request, response) => {
      if (n > 1) return json(response, 200, ORGANIZATION);
      // HTTP dates count whole seconds: the next whole second, and one more.
      until = Math.ceil(Date.now() / 1000) * 1000 + 1_000;
      json(response, 429, PUBLISHED_429, { "retry-after": new Date(until).toUTCString() });
    });
    const { client } = clientFor(timed);
    await expect(client.getOrganization(ORGANIZATION.id)).resolves.toEqual(ORGANIZATION);
    expect(timed.arrivals[1]).toBeGreaterThanOrEqual(until);
  });

  it("waits the body's details.retryAfterSeconds", async () => {
    const timed = await serve((n, _request, response) =>
      n === 1
        ? json(response, 429, { ...PUBLISHED_429, details: { limit: 60, period: "1m", retryAfterSeconds: 1 } })
        : json(response, 200, ORGANIZATION),
    );
    const { client } = clientFor(timed);
    await expect(client.getOrganization(ORGANIZATION.id)).resolves.toEqual(ORGANIZATION);
    expect(gaps(timed.arrivals)[0]).toBeGreaterThanOrEqual(1_000);
  });

  it("fails at once when the wait asked for is beyond maxRetryElapsedMs, saying what to configure", async () => {
    const timed = await serve((_n, _request, response) => json(response, 429, PUBLISHED_429, { "retry-after": "300" }));
    const { client, notices } = clientFor(timed);
    const error = await failure(client.getOrganization(ORGANIZATION.id));
    expect(error).toMatchObject({ status: 429, attempts: 1 });
    expect(error.message).toContain("raise maxRetryElapsedMs");
    expect(timed.arrivals).toHaveLength(1);
    expect(notices).toEqual([
      expect.stringMatching(
        /asking to wait 300 s; not waiting 300 s: that is beyond the bounds \(attempt 1 of at most 10/,
      ),
    ]);
  });
});

describe("pacing", () => {
  it("sends no more than requestsPerMinute in any minute's share, however many calls wait", async () => {
    const timed = await serve((_n, _request, response) => json(response, 200, ORGANIZATION));
    const perMinute = 600;
    const { client } = clientFor(timed, { requestsPerMinute: perMinute });
    await Promise.all(Array.from({ length: 16 }, () => client.getOrganization(ORGANIZATION.id)));
    // Requests start 100 ms apart at least (unpaced, all 16 would arrive at once); a busy machine may bunch arrivals by one more.
    const window = 1_000;
    const most = Math.max(
      ...timed.arrivals.map((start) => timed.arrivals.filter((time) => time >= start && time < start + window).length),
    );
    expect(most).toBeLessThanOrEqual((perMinute / 60) * (window / 1000) + 2);
  });
});
