import { createSocket } from "node:dgram";
import { connect, isIPv6 } from "node:net";

// Sends one message and waits for its answer: over UDP, or over TCP when the
// message is larger than UDP's classic 512 bytes or the UDP answer was
// truncated (RFC 1035 §4.2, RFC 7766). Every attempt is bounded in time.

/** The largest message sent over UDP without EDNS (RFC 1035 §2.3.4). */
const UDP_LIMIT = 512;
const TRUNCATED = 0x0200;
const DEFAULT_PORT = 53;

export interface DnsServer {
  host: string;
  port: number;
}

export interface ExchangeOptions {
  /** How long one attempt waits for its answer. */
  attemptTimeoutMs: number;
  /** How many times a UDP message is sent before giving up. */
  udpAttempts: number;
}

export const DEFAULT_EXCHANGE: ExchangeOptions = { attemptTimeoutMs: 3_000, udpAttempts: 2 };

/** The server did not answer: down, unreachable, or a firewall drops DNS. */
export class DnsUnreachableError extends Error {
  override readonly name = "DnsUnreachableError";
}

const SERVER = /^(?:\[(?<v6>[0-9a-fA-F:.]+)\]|(?<host>[^\s:[\]/]+))(?::(?<port>\d{1,5}))?$/;

/** A "host:port" (port 53 when left out, IPv6 in brackets) as a server; undefined when it is not one. */
export function parseServer(text: string): DnsServer | undefined {
  const match = SERVER.exec(text.trim());
  const host = match?.groups?.v6 ?? match?.groups?.host;
  const port = match?.groups?.port === undefined ? DEFAULT_PORT : Number(match.groups.port);
  if (!host || port < 1 || port > 65_535) return undefined;
  return { host, port };
}

export function describeServer(server: DnsServer): string {
  return isIPv6(server.host) ? `[${server.host}]:${server.port}` : `${server.host}:${server.port}`;
}

function seconds(ms: number): string {
  return `${ms / 1000} s`;
}

function isAnswerTo(request: Buffer, answer: Buffer): boolean {
  return answer.length >= 12 && answer.readUInt16BE(0) === request.readUInt16BE(0);
}

function udpAttempt(server: DnsServer, request: Buffer, timeoutMs: number): Promise<Buffer | Error> {
  return new Promise((resolve) => {
    const socket = createSocket(isIPv6(server.host) ? "udp6" : "udp4");
    const finish = (result: Buffer | Error) => {
      clearTimeout(timer);
      socket.close();
      resolve(result);
    };
    const timer = setTimeout(() => finish(new Error(`no answer within ${seconds(timeoutMs)}`)), timeoutMs);
    socket.on("error", (error) => finish(error));
    socket.on("message", (answer) => {
      if (isAnswerTo(request, answer)) finish(answer);
    });
    // A connected socket hears the port-unreachable of a server that is down, instead of waiting.
    socket.connect(server.port, server.host, () => socket.send(request));
  });
}

function tcpExchange(server: DnsServer, request: Buffer, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: server.host, port: server.port });
    let received = Buffer.alloc(0);
    const timer = setTimeout(() => fail(new Error(`no answer within ${seconds(timeoutMs)}`)), timeoutMs);
    function fail(error: Error) {
      clearTimeout(timer);
      socket.destroy();
      reject(new DnsUnreachableError(`no answer from ${describeServer(server)} over TCP: ${error.message}`));
    }
    socket.on("error", fail);
    socket.on("connect", () => {
      const length = Buffer.alloc(2);
      length.writeUInt16BE(request.length);
      socket.write(Buffer.concat([length, request]));
    });
    socket.on("data", (chunk) => {
      received = Buffer.concat([received, chunk]);
      if (received.length < 2 || received.length < 2 + received.readUInt16BE(0)) return;
      clearTimeout(timer);
      socket.destroy();
      resolve(received.subarray(2, 2 + received.readUInt16BE(0)));
    });
    socket.on("end", () => fail(new Error("the connection closed before the answer was complete")));
  });
}

/** Sends the message and answers the server's answer; fails naming the server when none comes in time. */
export async function exchange(
  server: DnsServer,
  request: Buffer,
  options: ExchangeOptions = DEFAULT_EXCHANGE,
): Promise<Buffer> {
  if (request.length > UDP_LIMIT) return tcpExchange(server, request, options.attemptTimeoutMs);
  let last: Error | undefined;
  for (let attempt = 0; attempt < options.udpAttempts; attempt++) {
    const result = await udpAttempt(server, request, options.attemptTimeoutMs);
    if (!(result instanceof Error)) {
      return (result.readUInt16BE(2) & TRUNCATED) === 0
        ? result
        : tcpExchange(server, request, options.attemptTimeoutMs);
    }
    last = result;
  }
  throw new DnsUnreachableError(
    `no answer from ${describeServer(server)} over UDP (${options.udpAttempts} attempts of ${seconds(options.attemptTimeoutMs)} each; last: ${last?.message}): is the server running and is the address right?`,
  );
}
