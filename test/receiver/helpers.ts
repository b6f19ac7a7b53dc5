import { randomBytes, randomUUID } from "node:crypto";
import type { WebhookEvent } from "pulumi-dmarc-partner/api";
import { Webhook } from "standardwebhooks";

export function newSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

export const events = {
  "domain.created": {
    data: { domain: "example.com", organizationId: "org_1", type: "sending", groupId: "grp_1" },
    metadata: { eventName: "domain.created", ownerId: "org_1" },
  },
  "domain.verified": {
    data: { domain: "example.com", verificationStatus: "failed", reason: "RUA address not found" },
    metadata: { eventName: "domain.verified", ownerId: "org_1" },
  },
  "report.received": {
    data: {
      domain: "example.com",
      organizationId: "org_1",
      reportId: "rep_1",
      reporter: "google.com",
      begin: "2025-01-01T00:00:00Z",
      end: "2025-01-02T00:00:00Z",
      messageCount: 42,
    },
    metadata: { eventName: "report.received", ownerId: "org_1" },
  },
} satisfies Record<WebhookEvent["metadata"]["eventName"], WebhookEvent>;

export interface SignedRequest {
  body: string;
  headers: Record<string, string>;
}

/** Signs a body the way the service does: Standard Webhooks headers from the `standardwebhooks` package. */
export function sign(
  secret: string,
  body: string,
  { id = `msg_${randomUUID()}`, at = new Date() }: { id?: string; at?: Date } = {},
): SignedRequest {
  return {
    body,
    headers: {
      "content-type": "application/json",
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": new Webhook(secret).sign(id, at, body),
    },
  };
}

export interface Answer {
  status: number;
  text: string;
  headers: Headers;
}

export async function post(url: string, request: SignedRequest): Promise<Answer> {
  const response = await fetch(url, { method: "POST", headers: request.headers, body: request.body });
  return { status: response.status, text: await response.text(), headers: response.headers };
}

/** The secret and its key part, either of which must never show up anywhere. */
export function secretForms(secret: string): string[] {
  return [secret, secret.slice("whsec_".length)];
}
