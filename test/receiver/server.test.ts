import {
  createReceiverServer,
  type DeliveryContext,
  isEvent,
  type ReceiverServer,
  type WebhookEvent,
} from "pulumi-dmarc-partner/receiver";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type Answer, events, newSecret, post, secretForms, sign } from "./helpers";

const secret = newSecret();
const received: { event: WebhookEvent; context: DeliveryContext }[] = [];
const answers: Answer[] = [];
let receiver: ReceiverServer;

async function send(request: Parameters<typeof post>[1], url = receiver.url): Promise<Answer> {
  const answer = await post(url, request);
  answers.push(answer);
  return answer;
}

beforeAll(async () => {
  receiver = await createReceiverServer({
    secret,
    path: "/hooks/dmarc",
    maxBodyBytes: 16 * 1024,
    onEvent: async (event, context) => {
      received.push({ event, context });
    },
  });
});

afterAll(async () => {
  await receiver.close();
});

describe("createReceiverServer over real HTTP", () => {
  it("listens on loopback at the configured path", () => {
    expect(receiver.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/hooks\/dmarc$/);
  });

  it.each(Object.entries(events))("accepts and parses %s", async (name, event) => {
    const request = sign(secret, JSON.stringify(event));
    const answer = await send(request);
    expect(answer.status).toBe(204);
    expect(answer.text).toBe("");
    const delivered = received.find((entry) => entry.context.webhookId === request.headers["webhook-id"]);
    expect(delivered?.event).toEqual(event);
    expect(delivered?.event.metadata.eventName).toBe(name);
    expect(delivered?.context.timestamp.getTime()).toBe(Number(request.headers["webhook-timestamp"]) * 1000);
  });

  it("hands the handler a typed event", async () => {
    const request = sign(secret, JSON.stringify(events["domain.verified"]));
    await send(request);
    const delivered = received.find((entry) => entry.context.webhookId === request.headers["webhook-id"]);
    if (!delivered || !isEvent(delivered.event, "domain.verified")) throw new Error("domain.verified not received");
    // These fields exist only on domain.verified: this compiles only because isEvent narrowed the union.
    expect(delivered.event.data.verificationStatus).toBe("failed");
    expect(delivered.event.data.reason).toBe("RUA address not found");
  });

  it("processes a redelivered webhook-id once and answers 2xx so the sender stops", async () => {
    const body = JSON.stringify(events["domain.created"]);
    const first = sign(secret, body, { id: "msg_redelivered" });
    // A retry: same id and body, signed again later, as the service does.
    const retry = sign(secret, body, { id: "msg_redelivered", at: new Date(Date.now() + 2000) });
    const answersInOrder = [await send(first), await send(retry), await send(first)];
    expect(answersInOrder.map((answer) => answer.status)).toEqual([204, 200, 200]);
    expect(JSON.parse(answersInOrder[1]?.text ?? "")).toEqual({ duplicate: true });
    expect(received.filter((entry) => entry.context.webhookId === "msg_redelivered")).toHaveLength(1);
  });

  const event = JSON.stringify(events["domain.verified"]);
  const minutes = (n: number) => new Date(Date.now() + n * 60_000);
  const rejections: [string, () => Parameters<typeof post>[1], number, string][] = [
    [
      "a forged signature",
      () => {
        const request = sign(secret, event);
        return { ...request, body: event.replace("failed", "success") };
      },
      401,
      "invalid_signature",
    ],
    ["a delivery signed with another secret", () => sign(newSecret(), event), 401, "invalid_signature"],
    [
      "a signature that is not v1",
      () => {
        const request = sign(secret, event);
        return { ...request, headers: { ...request.headers, "webhook-signature": "v2,AAAA" } };
      },
      401,
      "invalid_signature",
    ],
    ["a stale timestamp", () => sign(secret, event, { at: minutes(-6) }), 401, "timestamp_too_old"],
    ["a future timestamp", () => sign(secret, event, { at: minutes(6) }), 401, "timestamp_too_new"],
    ...(["webhook-id", "webhook-timestamp", "webhook-signature"] as const).map(
      (header): [string, () => Parameters<typeof post>[1], number, string] => [
        `a missing ${header} header`,
        () => {
          const request = sign(secret, event);
          const { [header]: _dropped, ...headers } = request.headers;
          return { ...request, headers };
        },
        400,
        "missing_headers",
      ],
    ),
    [
      "a timestamp that is not whole seconds",
      () => {
        const request = sign(secret, event);
        return { ...request, headers: { ...request.headers, "webhook-timestamp": "1.7e9" } };
      },
      400,
      "invalid_timestamp",
    ],
    ["malformed JSON", () => sign(secret, `${event.slice(0, -1)}`), 400, "malformed_json"],
    [
      "an unknown event name",
      () => sign(secret, JSON.stringify({ data: {}, metadata: { eventName: "alert.triggered", ownerId: "org_1" } })),
      400,
      "unknown_event",
    ],
    [
      "a known event with a wrong field",
      () => sign(secret, JSON.stringify({ ...events["report.received"], data: { messageCount: -1 } })),
      400,
      "invalid_payload",
    ],
    ["an oversized body", () => sign(secret, JSON.stringify({ pad: "x".repeat(20 * 1024) })), 413, "payload_too_large"],
  ];

  it.each(rejections)("rejects %s", async (_name, build, status, reason) => {
    const before = received.length;
    const answer = await send(build());
    expect(answer.status).toBe(status);
    expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
    const body = JSON.parse(answer.text);
    expect(body.error).toBe(reason);
    expect(typeof body.message).toBe("string");
    expect(received.length).toBe(before);
  });

  it("names the failing fields, not their values, of an invalid payload", async () => {
    const body = { ...events["report.received"], data: { ...events["report.received"].data, messageCount: "lots" } };
    const answer = await send(sign(secret, JSON.stringify(body)));
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text).message).toContain("data.messageCount");
    expect(answer.text).not.toContain("lots");
  });

  it("does not let a forged delivery use up its webhook-id", async () => {
    const forged = { ...sign(secret, event, { id: "msg_forged_first" }), body: "{}" };
    expect((await send(forged)).status).toBe(401);
    // A forgery must not poison the id: the genuine delivery is still processed.
    expect((await send(sign(secret, event, { id: "msg_forged_first" }))).status).toBe(204);
  });

  it("answers 413 to a chunked body that grows past the limit, without buffering it", async () => {
    const chunk = new TextEncoder().encode("x".repeat(4096));
    // 256 MiB, far more than the limit and than loopback's socket buffers can hold (tens of MiB): the upload
    // stops at the end only if the receiver reads it all. A body that fits those buffers is sent whole, on
    // a busy machine, before the 413 reaches the client.
    const chunks = 65_536;
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < chunks) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const request = sign(secret, event);
    const response = await fetch(receiver.url, {
      method: "POST",
      headers: request.headers,
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(JSON.parse(await response.text()).error).toBe("payload_too_large");
    expect(sent).toBeLessThan(chunks);
  });

  it("answers 405 to anything but POST, and 404 off its path", async () => {
    const get = await fetch(receiver.url);
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
    expect(JSON.parse(await get.text()).error).toBe("method_not_allowed");
    const elsewhere = await send(sign(secret, event), receiver.url.replace("/hooks/dmarc", "/other"));
    expect(elsewhere.status).toBe(404);
    const withQuery = await send(sign(secret, event), `${receiver.url}?source=dmarc`);
    expect(withQuery.status).toBe(204);
  });

  it("never echoes the secret in any answer", () => {
    expect(answers.length).toBeGreaterThan(20);
    for (const answer of answers) {
      for (const form of secretForms(secret)) expect(answer.text).not.toContain(form);
      for (const [, value] of answer.headers) for (const form of secretForms(secret)) expect(value).not.toContain(form);
    }
  });
});

describe("createReceiverServer options", () => {
  it("refuses a path that could never match", async () => {
    await expect(createReceiverServer({ secret, path: "hooks", onEvent: () => {} })).rejects.toThrow(/path/);
  });
});

describe("handler failures", () => {
  it("answers 500 without details, logs without the secret, and lets the retry run the handler", async () => {
    const failingSecret = newSecret();
    let calls = 0;
    const logged: string[] = [];
    const consoleError = vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => {
      logged.push(args.map(String).join(" "));
    });
    const server = await createReceiverServer({
      secret: failingSecret,
      onEvent: () => {
        calls += 1;
        if (calls === 1) throw new Error("database unavailable");
      },
    });
    try {
      const request = sign(failingSecret, JSON.stringify(events["domain.created"]));
      const failed = await post(server.url, request);
      expect(failed.status).toBe(500);
      expect(failed.text).not.toContain("database unavailable");
      const retried = await post(server.url, request);
      expect(retried.status).toBe(204);
      const again = await post(server.url, request);
      expect(again.status).toBe(200);
      expect(calls).toBe(2);
      expect(logged.join("\n")).toContain("database unavailable");
      for (const form of secretForms(failingSecret)) {
        expect(logged.join("\n")).not.toContain(form);
        expect(failed.text + retried.text + again.text).not.toContain(form);
      }
    } finally {
      consoleError.mockRestore();
      await server.close();
    }
  });
});
