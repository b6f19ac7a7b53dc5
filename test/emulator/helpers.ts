import { createSocket } from "node:dgram";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { type EmulatorOptions, type RunningEmulator, startEmulator } from "dmarc-partner-emulator";
import { ErrorEnvelope } from "pulumi-dmarc-partner/api";
import {
  decodeMessage,
  encodeMessage,
  Rcode,
  RecordClass,
  RecordType,
  type ResourceRecord,
  txtData,
} from "pulumi-dmarc-partner/dns";
import { expect } from "vitest";
import type { z } from "zod";

// Helpers for emulator tests. Everything talks to loopback only, and every
// wait is bounded in attempts and time.

export interface Answer<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

export interface CallOptions<S extends z.ZodType | undefined> {
  body?: unknown;
  query?: Record<string, string>;
  /** Overrides the caller's bearer token; null sends none. */
  token?: string | null;
  /** Raw body with this content type instead of JSON. */
  raw?: { contentType: string; text: string };
  /** Wire schema a 2xx answer must satisfy; error answers are always checked against the error envelope. */
  schema?: S;
}

/** A partner's view of the API over real HTTP. */
export class ApiCaller {
  constructor(
    readonly baseUrl: string,
    readonly token: string,
  ) {}

  async call<S extends z.ZodType | undefined = undefined>(
    method: string,
    path: string,
    options: CallOptions<S> = {},
  ): Promise<Answer<S extends z.ZodType ? z.output<S> : unknown>> {
    const url = new URL(path, this.baseUrl);
    for (const [key, value] of Object.entries(options.query ?? {})) url.searchParams.set(key, value);
    const headers: Record<string, string> = {};
    const token = options.token === undefined ? this.token : options.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (options.raw) {
      headers["content-type"] = options.raw.contentType;
      body = options.raw.text;
    } else if (options.body !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(options.body);
    }
    const response = await fetch(url, { method, headers, body, redirect: "manual" });
    const text = await response.text();
    const parsed: unknown = text === "" ? undefined : JSON.parse(text);
    if (response.status >= 400) ErrorEnvelope.strict().parse(parsed);
    else if (options.schema && response.status < 300) options.schema.parse(parsed);
    return { status: response.status, headers: response.headers, body: parsed as never };
  }
}

export interface ErrorBody {
  error: string;
  message: string;
  details: Record<string, unknown> & { invalidFields?: Array<{ field: string; message: string }> };
  traceId: string;
}

/** Asserts a refusal: status, error code, and optionally the fields named in invalidFields or the details. */
export function expectRefusal(
  answer: Answer,
  status: number,
  error: string,
  expected: { fields?: string[]; details?: Record<string, unknown> } = {},
): ErrorBody {
  const body = answer.body as ErrorBody;
  expect({ status: answer.status, error: body.error }).toEqual({ status, error });
  expect(body.traceId).toMatch(/^trace_[0-9a-f]{24}$/);
  if (expected.fields) {
    expect(body.details.invalidFields?.map((field) => field.field).sort()).toEqual([...expected.fields].sort());
  }
  if (expected.details) expect(body.details).toMatchObject(expected.details);
  return body;
}

export async function control<T = unknown>(emulator: RunningEmulator, method: string, path: string, body?: unknown) {
  const response = await fetch(`${emulator.url}/_emulator${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: (text === "" ? undefined : JSON.parse(text)) as T };
}

export interface TestEmulator {
  emulator: RunningEmulator;
  /** The first demo partner, through its static token. */
  alpha: ApiCaller;
  /** The second demo partner. */
  beta: ApiCaller;
  close(): Promise<void>;
}

/**
 * These tests state the answers of the service's guides; published.test.ts and
 * contract.test.ts state where the OpenAPI description differs.
 */
export async function startTestEmulator(options: EmulatorOptions = {}): Promise<TestEmulator> {
  const emulator = await startEmulator({ port: 0, retryScale: 0.001, profile: "guides", ...options });
  const [first, second] = emulator.partners;
  if (!first?.tokens[0] || !second?.tokens[0]) throw new Error("expected two partners with static tokens");
  return {
    emulator,
    alpha: new ApiCaller(emulator.url, first.tokens[0]),
    beta: new ApiCaller(emulator.url, second.tokens[0]),
    close: () => emulator.close(),
  };
}

/** Polls `probe` until it returns a value other than undefined; bounded in attempts and time. */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  { timeoutMs = 5_000, intervalMs = 25 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  const maxAttempts = Math.ceil(timeoutMs / intervalMs) + 1;
  for (let attempt = 0; attempt < maxAttempts && Date.now() <= deadline; attempt += 1) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  body: string;
  receivedAt: number;
}

export interface Receiver {
  url: string;
  received: ReceivedRequest[];
  close(): Promise<void>;
}

/** A webhook receiver on loopback; `statusFor(n)` decides the status of the n-th request (0-based). */
export async function startReceiver(statusFor: (index: number) => number = () => 200): Promise<Receiver> {
  const received: ReceivedRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const index = received.length;
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString("utf8"), receivedAt: Date.now() });
      response.writeHead(statusFor(index)).end();
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export interface TestDnsServer {
  /** "127.0.0.1:port", for the emulator's dns.resolver option. */
  address: string;
  /** TXT strings served for a name; an empty list removes the name (NXDOMAIN). */
  setTxt(name: string, values: string[]): void;
  queries: string[];
  close(): Promise<void>;
}

/** A real, minimal authoritative DNS server over UDP on loopback, answering TXT queries. */
export async function startDnsServer(): Promise<TestDnsServer> {
  const zone = new Map<string, string[]>();
  const queries: string[] = [];
  const socket = createSocket("udp4");
  socket.on("message", (message, remote) => {
    const query = decodeMessage(message);
    const answers: ResourceRecord[] = [];
    let rcode: number = Rcode.NOERROR;
    for (const question of query.questions) {
      queries.push(`${question.type === RecordType.TXT ? "TXT" : question.type} ${question.name}`);
      const values = zone.get(question.name);
      if (!values) rcode = Rcode.NXDOMAIN;
      else if (question.type === RecordType.TXT) {
        for (const value of values) {
          answers.push({
            name: question.name,
            type: RecordType.TXT,
            class: RecordClass.IN,
            ttl: 5,
            data: txtData(value),
          });
        }
      }
    }
    const response = encodeMessage({ ...query, response: true, authoritative: true, rcode, answers, additionals: [] });
    socket.send(response, remote.port, remote.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    setTxt(name, values) {
      if (values.length === 0) zone.delete(name.toLowerCase());
      else zone.set(name.toLowerCase(), values);
    },
    queries,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
