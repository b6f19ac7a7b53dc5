import type { IncomingMessage } from "node:http";

export type BodyResult = { outcome: "read"; body: Buffer } | { outcome: "too_large" } | { outcome: "aborted" };

/**
 * Reads a request body, stopping as soon as it passes `maxBytes` so an oversized or
 * endless body costs at most `maxBytes` of memory.
 */
export function readBody(request: IncomingMessage, maxBytes: number): Promise<BodyResult> {
  const declared = Number(request.headers["content-length"]);
  if (declared > maxBytes) return Promise.resolve({ outcome: "too_large" });

  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (result: BodyResult) => {
      request.off("data", onData).off("end", onEnd).off("error", onAbort).off("close", onAbort);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        request.pause();
        finish({ outcome: "too_large" });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => finish({ outcome: "read", body: Buffer.concat(chunks, size) });
    const onAbort = () => finish({ outcome: "aborted" });
    // "close" before "end" means the client went away mid-body.
    request.on("data", onData).on("end", onEnd).on("error", onAbort).on("close", onAbort);
  });
}
