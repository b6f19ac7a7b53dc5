import type { ServerResponse } from "node:http";

/** Answers with a small JSON body, or none. Answers are never cached: each describes one delivery. */
export function respond(response: ServerResponse, status: number, body?: object): void {
  const text = body === undefined ? "" : JSON.stringify(body);
  response.writeHead(status, {
    ...(text ? { "content-type": "application/json; charset=utf-8" } : {}),
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
  });
  response.end(text);
}
