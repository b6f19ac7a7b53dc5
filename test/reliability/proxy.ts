import { createServer, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { listenOnLoopback } from "../support/loopback";

// A loopback proxy in front of the emulator that answers some calls the way a
// broken gateway, a cut connection or a different API version would: answers
// the emulator's fault injection cannot give (HTML pages, cut-off or
// mis-shaped JSON, huge bodies, silence). Everything else passes through.

/** The call as the proxy received it. */
interface Incoming {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Upstream {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string | Buffer;
  /** Held back this long first, as a slow service or proxy does. */
  delayMs?: number;
}

export interface Tamper {
  /** What the case is called in figures and failures. */
  name: string;
  method: string;
  path: RegExp;
  /** Further narrows the calls tampered with, e.g. to one organisation's create. */
  body?: RegExp;
  /** Whether the emulator carries the call out before the answer is replaced. */
  forward: boolean;
  /** The answer sent instead; "hang" keeps the connection open without a byte. */
  answer(upstream: Upstream | undefined, incoming: Incoming): Answer | "hang";
}

export interface TamperingProxy {
  url: string;
  /** Calls tampered with, by case name. */
  applied: Record<string, number>;
  /** From now on every call passes through untouched: the incident is over. */
  heal(): void;
  close(): Promise<void>;
}

function forward(target: URL, method: string, path: string, headers: IncomingHttpHeaders, body: Buffer) {
  return new Promise<Upstream>((resolve, reject) => {
    const outgoing = httpRequest(
      { host: target.hostname, port: target.port, method, path, headers: { ...headers, host: target.host } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }),
        );
        response.on("error", reject);
      },
    );
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}

export async function startTamperingProxy(targetUrl: string, tampers: readonly Tamper[]): Promise<TamperingProxy> {
  const target = new URL(targetUrl);
  const applied: Record<string, number> = {};
  let active = [...tampers];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", async () => {
      const method = request.method ?? "GET";
      const path = request.url ?? "/";
      const body = Buffer.concat(chunks);
      const tamper = active.find(
        (candidate) =>
          candidate.method === method &&
          candidate.path.test(path.split("?")[0] ?? "") &&
          (candidate.body === undefined || candidate.body.test(body.toString("utf8"))),
      );
      try {
        if (tamper === undefined) {
          const upstream = await forward(target, method, path, request.headers, body);
          const { "transfer-encoding": _chunked, ...headers } = upstream.headers;
          response.writeHead(upstream.status, headers);
          response.end(upstream.body);
          return;
        }
        applied[tamper.name] = (applied[tamper.name] ?? 0) + 1;
        const upstream = tamper.forward ? await forward(target, method, path, request.headers, body) : undefined;
        const answer = tamper.answer(upstream, { method, path, headers: request.headers, body: body.toString("utf8") });
        if (answer === "hang") return;
        if (answer.delayMs !== undefined) await sleep(answer.delayMs);
        // The caller may have given up meanwhile.
        if (response.destroyed) return;
        response.writeHead(answer.status, answer.headers);
        response.end(answer.body);
      } catch {
        // The emulator could not be reached: the caller sees a dropped connection, as through a real proxy.
        request.socket.destroy();
      }
    });
  });
  const { url, close } = await listenOnLoopback(server);
  return {
    url,
    applied,
    heal: () => {
      active = [];
    },
    close,
  };
}

/** Replaces the JSON answer of the emulator with a transformed copy, keeping its status. */
export function rewriteJson(transform: (value: Record<string, unknown>) => unknown) {
  return (upstream: Upstream | undefined): Answer => {
    const value = JSON.parse(upstream?.body.toString("utf8") ?? "{}") as Record<string, unknown>;
    const text = JSON.stringify(transform(value));
    return { status: upstream?.status ?? 200, headers: { "content-type": "application/json" }, body: text };
  };
}

/** The emulator's answer cut in half, ending cleanly (a consistent content-length), as a broken proxy sends it. */
export function truncated(upstream: Upstream | undefined): Answer {
  const body = upstream?.body ?? Buffer.from("{}");
  return {
    status: upstream?.status ?? 200,
    headers: { "content-type": "application/json" },
    body: body.subarray(0, Math.floor(body.length / 2)),
  };
}

export function htmlPage(status: number, title: string): () => Answer {
  return () => ({
    status,
    headers: { "content-type": "text/html; charset=utf-8" },
    body: `<!DOCTYPE html><html><head><title>${title}</title></head><body><h1>${title}</h1><hr><center>nginx</center></body></html>`,
  });
}

/** The emulator's own answer, sent only after `delayMs`: the call was carried out, the caller hears too late. */
export function late(delayMs: number) {
  return (upstream: Upstream | undefined): Answer => ({
    status: upstream?.status ?? 200,
    headers: { "content-type": "application/json" },
    body: upstream?.body ?? "{}",
    delayMs,
  });
}

/** More than the client accepts from any answer (5 MB). */
export function huge(status: number): () => Answer {
  return () => ({
    status,
    headers: { "content-type": "application/json" },
    body: Buffer.alloc(6 * 1024 * 1024, 0x20),
  });
}
