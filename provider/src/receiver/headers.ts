/** Headers as node:http, Express and Fastify give them, or a Fetch API `Headers`. */
export type HeaderSource = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

/** The three Standard Webhooks headers every delivery carries. */
export interface WebhookHeaders {
  id: string;
  timestamp: string;
  signature: string;
}

function headerValue(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  // A repeated header is ambiguous (which copy was signed?), so it counts as absent.
  return typeof value === "string" ? value : undefined;
}

/** The Standard Webhooks headers, or undefined when any is missing or empty. */
export function readWebhookHeaders(headers: HeaderSource): WebhookHeaders | undefined {
  const id = headerValue(headers, "webhook-id");
  const timestamp = headerValue(headers, "webhook-timestamp");
  const signature = headerValue(headers, "webhook-signature");
  if (!id || !timestamp || !signature) return undefined;
  return { id, timestamp, signature };
}
