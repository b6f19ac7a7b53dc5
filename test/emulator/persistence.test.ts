import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DeliveryList, Organization, WebhookWithSecret } from "pulumi-dmarc-partner/api";
import { afterAll, describe, expect, it } from "vitest";
import { type Receiver, startReceiver, startTestEmulator, waitFor } from "./helpers";

let receiver: Receiver | undefined;

afterAll(async () => {
  await receiver?.close();
});

describe("state file", () => {
  it("keeps tenants, tokens and pending deliveries across a restart", async () => {
    const directory = mkdtempSync(join(tmpdir(), "dmarc-emulator-state-"));
    const stateFile = join(directory, "state.json");
    receiver = await startReceiver((index) => (index === 0 ? 500 : 200));

    // retryScale 0.1: the second attempt is due 500 ms after the first, after the restart.
    const first = await startTestEmulator({ stateFile, retryScale: 0.1 });
    const partner = first.emulator.partners[0];
    const issued = await fetch(`${first.emulator.url}/auth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `grant_type=client_credentials&client_id=${partner?.clientId}&client_secret=${partner?.clientSecret}`,
    });
    const { access_token } = (await issued.json()) as { access_token: string };
    const organization = await first.alpha.call("POST", "/v1/organizations", {
      body: { name: "Kept" },
      schema: Organization,
    });
    const organizationId = organization.body.id;
    const groupId = (
      (await first.alpha.call("POST", "/v1/domain-groups", { body: { organizationId, name: "G" } })).body as {
        id: string;
      }
    ).id;
    const webhook = await first.alpha.call("POST", "/v1/webhooks", {
      body: { name: "w", ownerId: organizationId, url: receiver.url, events: ["domain.created"] },
      schema: WebhookWithSecret,
    });
    await first.alpha.call("POST", "/v1/domains", {
      body: { organizationId, domain: "kept.example", type: "sending", groupId },
    });
    await waitFor("the first, failing attempt on record", async () => {
      const answer = await first.alpha.call("GET", `/v1/webhooks/${webhook.body.objectId}/deliveries`, {
        schema: DeliveryList,
      });
      const [entry] = (answer.body as { data: Array<{ attempts: number }> }).data;
      return entry?.attempts === 1 ? true : undefined;
    });
    await first.close();

    const saved = JSON.parse(readFileSync(stateFile, "utf8")) as { organizations: Array<{ id: string }> };
    expect(saved.organizations.map((record) => record.id)).toEqual([organizationId]);
    expect(readdirSync(directory)).toEqual(["state.json"]);

    const second = await startTestEmulator({ stateFile });
    try {
      const read = await second.alpha.call("GET", `/v1/organizations/${organizationId}`, {
        token: access_token,
        schema: Organization,
      });
      expect(read.body.name).toBe("Kept");
      const delivery = await waitFor("the resumed delivery", async () => {
        const answer = await second.alpha.call("GET", `/v1/webhooks/${webhook.body.objectId}/deliveries`, {
          schema: DeliveryList,
        });
        const [entry] = (answer.body as { data: Array<{ status: string; attempts: number }> }).data;
        return entry?.status === "success" ? entry : undefined;
      });
      expect(delivery.attempts).toBe(2);
      expect(new Set(receiver.received.map((request) => request.headers["webhook-id"])).size).toBe(1);
    } finally {
      await second.close();
    }
  });
});
