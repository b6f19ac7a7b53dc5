import { createWriteStream, openSync, type WriteStream } from "node:fs";

/** Keys whose values are credentials; matched case-insensitively, wherever they appear. */
const SECRET_KEYS = new Set(["authorization", "client_secret", "clientsecret", "access_token", "secret", "tokens"]);
const MAGIC_LINK = /\/auth\/magic\/[^/?#\s"]+/g;
const REDACTED = "[REDACTED]";

/** A copy of `value` with credentials and magic-link tokens replaced by a marker. */
function redact(value: unknown): unknown {
  if (typeof value === "string") return value.replace(MAGIC_LINK, `/auth/magic/${REDACTED}`);
  if (Array.isArray(value)) return value.map(redact);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [key, SECRET_KEYS.has(key.toLowerCase()) ? REDACTED : redact(inner)]),
    );
  }
  return value;
}

export interface ExchangeRecord {
  time: string;
  method: string;
  path: string;
  query: unknown;
  body: unknown;
  /** null when the connection was dropped before any answer. */
  status: number | null;
  response: unknown;
  partnerId: string | null;
  traceId: string;
  durationMs: number;
  /** Set when a fault destroyed the connection. */
  dropped?: "before-processing" | "after-processing";
}

/** Appends one JSON line per API request and answer. */
export class RequestLog {
  private readonly stream: WriteStream;

  /** Opens the file at once, so a bad path fails the start rather than the first request. */
  constructor(path: string) {
    this.stream = createWriteStream(path, { fd: openSync(path, "a") });
  }

  write(record: ExchangeRecord): void {
    this.stream.write(`${JSON.stringify(redact(record))}\n`);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.stream.end(resolve));
  }
}
