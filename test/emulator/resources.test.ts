import {
  Domain,
  DomainGroup,
  DomainGroupList,
  DomainList,
  Organization,
  OrganizationList,
  Webhook,
  WebhookList,
  WebhookWithSecret,
} from "pulumi-dmarc-partner/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { control, expectRefusal, startTestEmulator, type TestEmulator } from "./helpers";

let t: TestEmulator;

beforeAll(async () => {
  t = await startTestEmulator();
});

afterAll(() => t.close());

async function organization(name: string) {
  return (await t.alpha.call("POST", "/v1/organizations", { body: { name }, schema: Organization })).body.id;
}

describe("reads and updates of every resource family", () => {
  it("lists organisations in both orders", async () => {
    await control(t.emulator, "POST", "/reset");
    await organization("first");
    await organization("second");
    const desc = await t.alpha.call("GET", "/v1/organizations", { query: { order: "desc" }, schema: OrganizationList });
    expect(desc.body.data.map((record) => record.name)).toEqual(["second", "first"]);
  });

  it("reads, renames and lists domain groups with their domains", async () => {
    const organizationId = await organization("groups");
    const group = await t.alpha.call("POST", "/v1/domain-groups", {
      body: { organizationId, name: "Old" },
      schema: DomainGroup,
    });
    await t.alpha.call("POST", "/v1/domains", {
      body: { organizationId, domain: "grouped.example", type: "parked", groupId: group.body.id },
    });
    const renamed = await t.alpha.call("PUT", `/v1/domain-groups/${group.body.id}`, {
      body: { name: "New" },
      schema: DomainGroup,
    });
    expect(renamed.body).toEqual({ id: group.body.id, name: "New", domains: ["grouped.example"] });
    const read = await t.alpha.call("GET", `/v1/domain-groups/${group.body.id}`, {
      query: { organizationId },
      schema: DomainGroup,
    });
    expect(read.body.name).toBe("New");
    const list = await t.alpha.call("GET", "/v1/domain-groups", {
      query: { organizationId, pageSize: "1" },
      schema: DomainGroupList,
    });
    expect(list.body.meta).toMatchObject({ total: 1, limit: 1, hasNextPage: false });
    const other = await organization("other");
    expectRefusal(
      await t.alpha.call("GET", `/v1/domain-groups/${group.body.id}`, { query: { organizationId: other } }),
      404,
      "ResourceNotFound",
    );
  });

  it("patches a domain's type and group, and needs organizationId when the name is in two organisations", async () => {
    const first = await organization("one");
    const second = await organization("two");
    const groups: Record<string, string> = {};
    for (const organizationId of [first, second]) {
      const group = await t.alpha.call("POST", "/v1/domain-groups", {
        body: { organizationId, name: "G" },
        schema: DomainGroup,
      });
      groups[organizationId] = group.body.id;
      await t.alpha.call("POST", "/v1/domains", {
        body: { organizationId, domain: "shared.example", type: "sending", groupId: group.body.id },
      });
    }
    expectRefusal(
      await t.alpha.call("PATCH", "/v1/domains/shared.example", { body: { type: "parked" } }),
      400,
      "ValidationError",
      { fields: ["organizationId"] },
    );
    const moved = await t.alpha.call("POST", "/v1/domain-groups", {
      body: { organizationId: first, name: "Moved" },
      schema: DomainGroup,
    });
    const patched = await t.alpha.call("PATCH", "/v1/domains/shared.example", {
      query: { organizationId: first },
      body: { type: "parked", groupId: moved.body.id },
      schema: Domain,
    });
    expect(patched.body).toMatchObject({ type: "parked", domainGroup: "Moved", domainGroupId: moved.body.id });
    expectRefusal(
      await t.alpha.call("PATCH", "/v1/domains/shared.example", {
        query: { organizationId: first },
        body: { groupId: groups[second] },
      }),
      404,
      "ResourceNotFound",
    );
    expectRefusal(
      await t.alpha.call("PATCH", "/v1/domains/shared.example", { query: { organizationId: first }, body: {} }),
      400,
      "ValidationError",
    );
    const list = await t.alpha.call("GET", "/v1/domains", { query: { organizationId: second }, schema: DomainList });
    expect(list.body.data).toEqual([expect.objectContaining({ domain: "shared.example", type: "sending" })]);
    expect(
      (await t.alpha.call("DELETE", "/v1/domains/shared.example", { query: { organizationId: second } })).status,
    ).toBe(204);
    expectRefusal(
      await t.alpha.call("GET", "/v1/domains/shared.example", { query: { organizationId: second } }),
      404,
      "ResourceNotFound",
    );
  });

  it("lists webhooks by owner and deletes them", async () => {
    const organizationId = await organization("hooks");
    const created = await t.alpha.call("POST", "/v1/webhooks", {
      body: { name: "h", ownerId: organizationId, url: "https://hooks.example/a", events: ["domain.created"] },
      schema: WebhookWithSecret,
    });
    const updated = await t.alpha.call("PUT", `/v1/webhooks/${created.body.objectId}`, {
      body: { url: "https://hooks.example/b", events: ["report.received", "report.received"] },
      schema: Webhook,
    });
    expect(updated.body).toMatchObject({ url: "https://hooks.example/b", events: ["report.received"] });
    const owned = await t.alpha.call("GET", `/v1/webhooks/owner/${organizationId}`, { schema: WebhookList });
    expect(owned.body).toMatchObject({ data: [{ objectId: created.body.objectId }] });
    const foreign = await t.beta.call("GET", `/v1/webhooks/owner/${organizationId}`, { schema: WebhookList });
    expect(foreign.body).toMatchObject({ data: [] });
    expectRefusal(await t.beta.call("GET", `/v1/webhooks/${created.body.objectId}`), 404, "ResourceNotFound");
    expect((await t.alpha.call("DELETE", `/v1/webhooks/${created.body.objectId}`)).status).toBe(204);
    expectRefusal(await t.alpha.call("GET", `/v1/webhooks/${created.body.objectId}`), 404, "ResourceNotFound");
  });
});
