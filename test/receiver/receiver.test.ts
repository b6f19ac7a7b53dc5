import {
  type ClaimResult,
  createWebhookReceiver,
  createWebhookVerifier,
  type DeliveryStore,
  isEvent,
  type WebhookEvent,
} from "pulumi-dmarc-partner/receiver";
import { describe, expect, it } from "vitest";
import { events, newSecret, secretForms, sign } from "./helpers";

const body = JSON.stringify(events["domain.created"]);

describe("createWebhookVerifier", () => {
  it("reads headers from a Fetch Headers object and any header case, and bodies as Buffer or Uint8Array", () => {
    const secret = newSecret();
    const verifier = createWebhookVerifier({ secret });
    const request = sign(secret, body);
    const shouting = Object.fromEntries(
      Object.entries(request.headers).map(([key, value]) => [key.toUpperCase(), value]),
    );
    for (const delivery of [
      { body: request.body, headers: new Headers(request.headers) },
      { body: Buffer.from(request.body), headers: shouting },
      { body: new TextEncoder().encode(request.body), headers: request.headers },
    ]) {
      const result = verifier.verify(delivery);
      expect(result.outcome).toBe("verified");
    }
  });

  it("accepts any of several secrets while one rolls over", () => {
    const [oldSecret, newOne] = [newSecret(), newSecret()];
    const verifier = createWebhookVerifier({ secret: [oldSecret, newOne] });
    expect(verifier.verify(sign(oldSecret, body)).outcome).toBe("verified");
    expect(verifier.verify(sign(newOne, body)).outcome).toBe("verified");
    expect(verifier.verify(sign(newSecret(), body)).outcome).toBe("rejected");
  });

  it("accepts a signature among several offered, as during the sender's own rotation", () => {
    const secret = newSecret();
    const request = sign(secret, body);
    const signature = `v1,${Buffer.alloc(32).toString("base64")} ${request.headers["webhook-signature"]}`;
    const result = createWebhookVerifier({ secret }).verify({
      body,
      headers: { ...request.headers, "webhook-signature": signature },
    });
    expect(result.outcome).toBe("verified");
  });

  it("rejects a header sent twice rather than guess which copy was signed", () => {
    const secret = newSecret();
    const request = sign(secret, body);
    const result = createWebhookVerifier({ secret }).verify({
      body,
      headers: { ...request.headers, "webhook-id": [request.headers["webhook-id"] ?? "", "msg_other"] },
    });
    expect(result).toMatchObject({ outcome: "rejected", reason: "missing_headers", status: 400 });
  });

  it("honours a custom timestamp tolerance both ways", () => {
    const secret = newSecret();
    const verifier = createWebhookVerifier({ secret, toleranceSeconds: 30 });
    const at = (seconds: number) => ({ at: new Date(Date.now() + seconds * 1000) });
    expect(verifier.verify(sign(secret, body, at(-20))).outcome).toBe("verified");
    expect(verifier.verify(sign(secret, body, at(-60)))).toMatchObject({ reason: "timestamp_too_old", status: 401 });
    expect(verifier.verify(sign(secret, body, at(60)))).toMatchObject({ reason: "timestamp_too_new", status: 401 });
    const lenient = createWebhookVerifier({ secret, toleranceSeconds: 3600 });
    expect(lenient.verify(sign(secret, body, at(-1800))).outcome).toBe("verified");
  });

  it("measures the size limit in bytes, not characters", () => {
    const secret = newSecret();
    const verifier = createWebhookVerifier({ secret, maxBodyBytes: 600 });
    const wide = JSON.stringify({
      ...events["domain.verified"],
      data: { ...events["domain.verified"].data, reason: "é".repeat(250) },
    });
    expect(wide.length).toBeLessThan(600);
    expect(verifier.verify(sign(secret, wide))).toMatchObject({ reason: "payload_too_large", status: 413 });
  });

  it("refuses a malformed secret without repeating it", () => {
    for (const secret of ["whsec_not*base64!", "", "whsec_", ["whsec_ok", 42 as unknown as string], []]) {
      let message = "";
      try {
        createWebhookVerifier({ secret });
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toMatch(/^receiver: `secret`/);
      for (const value of [secret].flat())
        if (typeof value === "string" && value.length > 6) expect(message).not.toContain(value);
    }
  });

  it("refuses nonsensical limits", () => {
    const secret = newSecret();
    expect(() => createWebhookVerifier({ secret, toleranceSeconds: 0 })).toThrow(/toleranceSeconds/);
    expect(() => createWebhookVerifier({ secret, maxBodyBytes: -1 })).toThrow(/maxBodyBytes/);
    expect(() => createWebhookVerifier({ secret, maxBodyBytes: Number.NaN })).toThrow(/maxBodyBytes/);
  });

  it("keeps the secret out of every rejection and out of the verifier object", () => {
    const secret = newSecret();
    const verifier = createWebhookVerifier({ secret });
    const rejected = [
      verifier.verify({ body, headers: {} }),
      verifier.verify(sign(newSecret(), body)),
      verifier.verify(sign(secret, "{")),
      verifier.verify(sign(secret, body, { at: new Date(0) })),
    ];
    const visible = JSON.stringify([rejected, verifier]);
    for (const form of secretForms(secret)) expect(visible).not.toContain(form);
  });
});

describe("createWebhookReceiver", () => {
  it("answers a delivery that arrives while its twin is still processing with 409, then 200 once done", async () => {
    const secret = newSecret();
    let finish = () => {};
    const handled: WebhookEvent[] = [];
    const receiver = createWebhookReceiver({
      secret,
      onEvent: (event) =>
        new Promise<void>((resolve) => {
          handled.push(event);
          finish = resolve;
        }),
    });
    const request = sign(secret, body);
    const first = receiver.receive(request);
    await new Promise((resolve) => setImmediate(resolve));
    // 409, not 2xx: if the first attempt fails, the sender must still retry.
    expect(await receiver.receive(request)).toMatchObject({ outcome: "rejected", reason: "in_progress", status: 409 });
    finish();
    expect(await first).toMatchObject({ outcome: "accepted", status: 204 });
    expect(await receiver.receive(request)).toMatchObject({ outcome: "duplicate", status: 200 });
    expect(handled).toHaveLength(1);
  });

  it("returns the handler's error to the caller and releases the id", async () => {
    const secret = newSecret();
    const failure = new Error("queue full");
    let calls = 0;
    const receiver = createWebhookReceiver({
      secret,
      onEvent: () => {
        calls += 1;
        if (calls === 1) throw failure;
      },
    });
    const request = sign(secret, body);
    const failed = await receiver.receive(request);
    expect(failed).toMatchObject({ outcome: "failed", status: 500, error: failure });
    expect(JSON.stringify(failed.outcome === "failed" ? failed.body : {})).not.toContain("queue full");
    expect(await receiver.receive(request)).toMatchObject({ outcome: "accepted" });
    expect(calls).toBe(2);
  });

  it("records ids in a custom store, and only for deliveries that verify", async () => {
    const secret = newSecret();
    const calls: string[] = [];
    const states = new Map<string, ClaimResult>();
    const store: DeliveryStore = {
      async claim(id) {
        calls.push(`claim ${id}`);
        const state = states.get(id);
        if (state) return state;
        states.set(id, "processing");
        return "claimed";
      },
      async complete(id) {
        calls.push(`complete ${id}`);
        states.set(id, "done");
      },
      async release(id) {
        calls.push(`release ${id}`);
        states.delete(id);
      },
    };
    const receiver = createWebhookReceiver({ secret, store, onEvent: () => {} });
    await receiver.receive(sign(newSecret(), body, { id: "msg_forged" }));
    await receiver.receive(sign(secret, body, { id: "msg_ok" }));
    await receiver.receive(sign(secret, body, { id: "msg_ok" }));
    expect(calls).toEqual(["claim msg_ok", "complete msg_ok", "claim msg_ok"]);
  });
});

describe("isEvent", () => {
  it("tells the three events apart by metadata.eventName", () => {
    const all: WebhookEvent[] = Object.values(events);
    expect(all.filter((event) => isEvent(event, "domain.verified"))).toEqual([events["domain.verified"]]);
    expect(all.filter((event) => isEvent(event, "report.received")).map((event) => event.data.messageCount)).toEqual([
      42,
    ]);
  });
});
