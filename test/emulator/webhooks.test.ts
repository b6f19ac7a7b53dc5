import { createServer } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import {
  Delivery,
  DeliveryList,
  DomainGroup,
  listOf,
  Organization,
  ReportReceivedEvent,
  WebhookEvent,
  WebhookWithSecret,
} from "pulumi-dmarc-partner/api";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { control, type Receiver, startReceiver, startTestEmulator, type TestEmulator, waitFor } from "./helpers";

let t: TestEmulator;
const receivers: Receiver[] = [];

beforeAll(async () => {
  t = await startTestEmulator({ webhookTimeoutMs: 300 });
});

afterAll(() => t.close());

afterEach(async () => {
  await control(t.emulator, "POST", "/reset");
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

async function receiverAnswering(statusFor: (index: number) => number) {
  const receiver = await startReceiver(statusFor);
  receivers.push(receiver);
  return receiver;
}

async function setUp(url: string, events: string[], owner?: "organization") {
  const organizationId = (
    await t.alpha.call("POST", "/v1/organizations", { body: { name: "O" }, schema: Organization })
  ).body.id;
  const groupId = (
    await t.alpha.call("POST", "/v1/domain-groups", { body: { organizationId, name: "G" }, schema: DomainGroup })
  ).body.id;
  const ownerId = owner === "organization" ? organizationId : (t.emulator.partners[0]?.id ?? "");
  const webhook = (
    await t.alpha.call("POST", "/v1/webhooks", {
      body: { name: "w", ownerId, url, events },
      schema: WebhookWithSecret,
    })
  ).body;
  return { organizationId, groupId, webhook };
}

function addDomain(organizationId: string, groupId: string, domain: string) {
  return t.alpha.call("POST", "/v1/domains", { body: { organizationId, domain, type: "parked", groupId } });
}

/** The published Delivery plus what the emulator adds: the webhook-id sent and one entry per attempt. */
const EmulatorDeliveryList = listOf(
  Delivery.extend({
    id: z.string(),
    history: z.array(z.object({ attempt: z.number(), at: z.string(), statusCode: z.number().nullable() })),
  }),
);

async function deliveries(webhookId: string) {
  const answer = await t.alpha.call("GET", `/v1/webhooks/${webhookId}/deliveries`, { schema: DeliveryList });
  return EmulatorDeliveryList.parse(answer.body);
}

describe("webhook delivery", () => {
  it("retries a receiver answering 500 twice, with the same webhook-id, and records 3 attempts and success", async () => {
    const receiver = await receiverAnswering((index) => (index < 2 ? 500 : 200));
    const { organizationId, groupId, webhook } = await setUp(receiver.url, ["domain.created"]);
    await addDomain(organizationId, groupId, "retry.example");
    await waitFor("three attempts", () => (receiver.received.length >= 3 ? true : undefined));
    const ids = receiver.received.map((request) => request.headers["webhook-id"]);
    expect(new Set(ids).size).toBe(1);
    expect(ids[0]).toMatch(/^msg_[0-9a-f]{24}$/);
    for (const request of receiver.received) {
      const payload = new Webhook(webhook.secret).verify(request.body, {
        "webhook-id": String(request.headers["webhook-id"]),
        "webhook-timestamp": String(request.headers["webhook-timestamp"]),
        "webhook-signature": String(request.headers["webhook-signature"]),
      });
      expect(WebhookEvent.parse(payload).metadata.eventName).toBe("domain.created");
    }
    const delivery = await waitFor("a finished delivery", async () => {
      const [first] = (await deliveries(webhook.objectId)).data;
      return first?.status === "success" ? first : undefined;
    });
    expect(delivery).toMatchObject({ id: ids[0], attempts: 3, status: "success", statusCode: 200 });
    expect(delivery.history.map((attempt) => attempt.statusCode)).toEqual([500, 500, 200]);
    // 0 ms, then 5 ms after the first failure at retryScale 0.001 (5 s unscaled).
    const [first, second] = receiver.received;
    expect((second?.receivedAt ?? 0) - (first?.receivedAt ?? 0)).toBeGreaterThanOrEqual(4);
  });

  it("gives up after 8 attempts on the scaled schedule", async () => {
    // At 0.00001 the whole schedule (about 36 hours unscaled) takes about a second.
    const fast = await startTestEmulator({ retryScale: 0.00001 });
    try {
      const receiver = await receiverAnswering(() => 503);
      const organizationId = (
        await fast.alpha.call("POST", "/v1/organizations", { body: { name: "O" }, schema: Organization })
      ).body.id;
      const groupId = (
        await fast.alpha.call("POST", "/v1/domain-groups", { body: { organizationId, name: "G" }, schema: DomainGroup })
      ).body.id;
      const webhook = (
        await fast.alpha.call("POST", "/v1/webhooks", {
          body: { name: "w", ownerId: organizationId, url: receiver.url, events: ["domain.created"] },
          schema: WebhookWithSecret,
        })
      ).body;
      await fast.alpha.call("POST", "/v1/domains", {
        body: { organizationId, domain: "down.example", type: "parked", groupId },
      });
      const delivery = await waitFor(
        "a failed delivery",
        async () => {
          const answer = await fast.alpha.call("GET", `/v1/webhooks/${webhook.objectId}/deliveries`, {
            schema: DeliveryList,
          });
          const [first] = (answer.body as { data: Array<Record<string, unknown>> }).data;
          return first?.status === "failed" ? first : undefined;
        },
        { timeoutMs: 10_000, intervalMs: 50 },
      );
      expect(delivery).toMatchObject({ attempts: 8, maxAttempts: 8, statusCode: 503, nextRetryAt: null });
      expect(receiver.received).toHaveLength(8);
    } finally {
      await fast.close();
    }
  });

  it("ends an attempt at the timeout when the receiver does not answer", async () => {
    const sockets = new Set<Socket>();
    const silent = createServer(() => {
      // Never answers: the emulator's 300 ms timeout must end the attempt.
    });
    silent.on("connection", (socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const { port } = silent.address() as AddressInfo;
    try {
      const { organizationId, groupId, webhook } = await setUp(`http://127.0.0.1:${port}/`, ["domain.created"]);
      await addDomain(organizationId, groupId, "slow.example");
      const delivery = await waitFor("a timed-out attempt", async () => {
        const [first] = (await deliveries(webhook.objectId)).data;
        return first && first.attempts >= 1 ? first : undefined;
      });
      expect(delivery).toMatchObject({ statusCode: null, error: "no answer within 300 ms" });
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it("delivers only to active webhooks subscribed to the event and owned by the partner or the organisation", async () => {
    const partnerWide = await receiverAnswering(() => 200);
    const ownOrganization = await receiverAnswering(() => 200);
    const otherOrganization = await receiverAnswering(() => 200);
    const notSubscribed = await receiverAnswering(() => 200);
    const first = await setUp(ownOrganization.url, ["report.received"], "organization");
    await setUp(otherOrganization.url, ["report.received"], "organization");
    await setUp(partnerWide.url, ["report.received"]);
    await setUp(notSubscribed.url, ["domain.verified"]);
    await addDomain(first.organizationId, first.groupId, "reports.example");
    const ingested = await control<{ reportId: string }>(t.emulator, "POST", "/reports", {
      organizationId: first.organizationId,
      domain: "reports.example",
      reporter: "google.com",
      messageCount: 42,
    });
    expect(ingested.status).toBe(201);
    await waitFor("both deliveries", () =>
      partnerWide.received.length >= 1 && ownOrganization.received.length >= 1 ? true : undefined,
    );
    const event = ReportReceivedEvent.parse(JSON.parse(ownOrganization.received[0]?.body ?? ""));
    expect(event.data).toMatchObject({
      domain: "reports.example",
      organizationId: first.organizationId,
      reportId: ingested.body.reportId,
      reporter: "google.com",
      messageCount: 42,
    });
    expect(event.metadata.ownerId).toBe(first.organizationId);
    // Give stray deliveries a moment to show up before asserting there are none.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(otherOrganization.received).toEqual([]);
    expect(notSubscribed.received).toEqual([]);
  });
});
