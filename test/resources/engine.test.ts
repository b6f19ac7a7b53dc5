import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Stack } from "@pulumi/pulumi/automation";
import * as dmarc from "pulumi-dmarc-partner";
import { createClient, type DmarcClient } from "pulumi-dmarc-partner/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { createTestStack, recordedProviders, storedState } from "../support/engine";

// Acceptance tests through the real engine: create, read back, update,
// refresh, import and destroy of a whole tenant against the emulator.

interface TenantSpec {
  orgName: string;
  groupName: string;
  webhookEvents: ("domain.created" | "domain.verified" | "report.received")[];
  domains: { name: string; type: "sending" | "parked" }[];
  plan: string;
  adminEmail: string;
}

const initialSpec: TenantSpec = {
  orgName: "Acme Corp",
  groupName: "Acme main",
  webhookEvents: ["domain.verified"],
  domains: [
    { name: "acme.example", type: "sending" },
    { name: "acme-parked.example", type: "parked" },
  ],
  plan: "Starter",
  adminEmail: "admin@acme.example",
};

function tenantProgram(spec: () => TenantSpec) {
  return async () => {
    const tenant = spec();
    const org = new dmarc.Organization("acme", { name: tenant.orgName });
    const group = new dmarc.DomainGroup("acme-main", { organizationId: org.organizationId, name: tenant.groupName });
    const hook = new dmarc.Webhook("acme-events", {
      name: "acme events",
      url: "http://127.0.0.1:9/hooks/dmarc",
      events: tenant.webhookEvents,
    });
    const domains = tenant.domains.map(
      (domain) =>
        new dmarc.Domain(domain.name, {
          organizationId: org.organizationId,
          domain: domain.name,
          type: domain.type,
          groupId: group.groupId,
        }),
    );
    const plan = new dmarc.Subscription("acme-plan", {
      organizationId: org.organizationId,
      priceId: dmarc.getPriceId({ plan: tenant.plan, frequency: "monthly" }),
    });
    const admin = new dmarc.Invitation("acme-admin", { organizationId: org.organizationId, email: tenant.adminEmail });
    return {
      organizationId: org.organizationId,
      groupId: group.groupId,
      webhookId: hook.webhookId,
      webhookSecret: hook.secret,
      records: domains.map((domain) => domain.setupRecord),
      subscriptionId: plan.subscriptionId,
      subscriptionStatus: plan.status,
      priceId: plan.priceId,
      adminUserId: admin.userId,
    };
  };
}

let handle: EmulatorHandle;
let client: DmarcClient;
const requestLog = join(tmpdir(), `dmarc-engine-test-${process.pid}.jsonl`);

function apiRequestCount(): number {
  try {
    return readFileSync(requestLog, "utf8").split("\n").filter(Boolean).length;
  } catch {
    return 0;
  }
}

beforeAll(async () => {
  handle = await startTestEmulator({ requestLogFile: requestLog });
  client = createClient({
    baseUrl: handle.emulator.url,
    clientId: handle.partner.clientId,
    clientSecret: handle.partner.clientSecret,
  });
});

afterAll(async () => {
  await handle?.emulator.close();
});

describe("a full tenant through the engine", () => {
  let spec: TenantSpec = initialSpec;
  let stack: Stack;

  beforeAll(async () => {
    stack = await createTestStack({
      projectName: "tenant-lifecycle",
      program: tenantProgram(() => spec),
      config: handle.stackConfig,
    });
  });

  afterAll(async () => {
    await stack?.workspace.removeStack(stack.name, { force: true });
  });

  it("creates the tenant with its outputs (a), then previews no change (b)", async () => {
    const up = await stack.up();
    expect(up.summary.result).toBe("succeeded");
    expect(up.summary.resourceChanges?.create).toBe(8);

    const outputs = up.outputs;
    const organizationId = outputs.organizationId?.value as string;
    expect(organizationId).toMatch(/^org_[0-9a-f]{24}$/);
    const records = outputs.records?.value as dmarc.DnsSetupRecord[];
    expect(records.map((record) => record.host)).toEqual(["_dmarc.acme.example", "_dmarc.acme-parked.example"]);
    for (const record of records) {
      expect(record).toMatchObject({ name: "_dmarc", type: "txt", recordType: "TXT" });
      expect(record.value).toMatch(/^v=DMARC1;/);
      expect(record.value).toMatch(/rua=mailto:/);
    }
    expect(outputs.subscriptionStatus?.value).toBe("active");
    expect(outputs.webhookSecret?.secret).toBe(true);
    expect(outputs.webhookSecret?.value).toMatch(/^whsec_/);

    const plans = await client.listPlans();
    expect(outputs.priceId?.value).toBe(dmarc.selectPriceId(plans, { plan: "Starter", frequency: "monthly" }));
    const admin = await client.getUser(organizationId, initialSpec.adminEmail);
    expect(admin?.id).toBe(outputs.adminUserId?.value);
    expect(await client.listDomains(organizationId)).toHaveLength(2);

    const preview = await stack.preview();
    expect(preview.changeSummary).toEqual({ same: 8 });
  }, 180_000);

  it("updates in place what the service updates in place (c)", async () => {
    spec = {
      ...initialSpec,
      orgName: "Acme Corporation",
      groupName: "Acme primary",
      webhookEvents: ["domain.verified", "domain.created"],
      domains: [
        { name: "acme.example", type: "parked" },
        { name: "acme-parked.example", type: "parked" },
      ],
      plan: "Business",
    };
    const preview = await stack.preview();
    expect(preview.changeSummary).toEqual({ same: 3, update: 5 });

    const before = await stack.outputs();
    const up = await stack.up();
    expect(up.summary.resourceChanges).toEqual({ same: 3, update: 5 });

    const organizationId = up.outputs.organizationId?.value as string;
    expect(organizationId).toBe(before.organizationId?.value);
    expect((await client.getOrganization(organizationId))?.name).toBe("Acme Corporation");
    const groupId = up.outputs.groupId?.value as string;
    expect((await client.getDomainGroup(organizationId, groupId))?.name).toBe("Acme primary");
    expect((await client.getWebhook(up.outputs.webhookId?.value as string))?.events).toEqual([
      "domain.verified",
      "domain.created",
    ]);
    expect((await client.getDomain(organizationId, "acme.example"))?.type).toBe("parked");

    // The price change moved the subscription to a new id and cancelled the old one.
    const plans = await client.listPlans();
    const businessPrice = dmarc.selectPriceId(plans, { plan: "Business", frequency: "monthly" });
    expect(up.outputs.priceId?.value).toBe(businessPrice);
    const subscriptions = await client.listSubscriptions(organizationId);
    const active = subscriptions.filter((subscription) => subscription.cancelledAt === null);
    expect(active.map((subscription) => subscription.id)).toEqual([up.outputs.subscriptionId?.value]);
    expect(active[0]?.items[0]?.priceId).toBe(businessPrice);
  }, 180_000);

  it("notices an object deleted behind its back and recreates it (d)", async () => {
    const organizationId = (await stack.outputs()).organizationId?.value as string;
    expect(await client.deleteDomain(organizationId, "acme-parked.example")).toBe(true);

    const refresh = await stack.refresh();
    expect(refresh.summary.resourceChanges?.delete).toBe(1);

    const up = await stack.up();
    expect(up.summary.resourceChanges?.create).toBe(1);
    expect(await client.getDomain(organizationId, "acme-parked.example")).toBeDefined();
  }, 180_000);

  it("records in every resource a provider text that loads its type's module by package name", async () => {
    const stored = JSON.parse(await storedState(stack)) as {
      checkpoint: { latest: { resources: Parameters<typeof recordedProviders>[0] } };
    };
    const providers = recordedProviders(stored.checkpoint.latest.resources);
    expect([...providers.keys()].sort()).toEqual(
      ["Domain", "DomainGroup", "Invitation", "Organization", "Subscription", "Webhook"].sort(),
    );
    for (const [type, text] of providers) {
      const module = type.charAt(0).toLowerCase() + type.slice(1);
      expect(text).toBe(`exports.handler=()=>require("pulumi-dmarc-partner/providers/${module}");`);
    }
  }, 60_000);

  it("records where the program declared each resource, without the SDK's and the package's own frames", async () => {
    const stored = JSON.parse(await storedState(stack)) as {
      checkpoint: { latest: { resources: { type: string; sourcePosition?: string; stackTrace?: object[] }[] } };
    };
    const ours = stored.checkpoint.latest.resources.filter((resource) => resource.type.includes(":dynamic/dmarc:"));
    expect(new Set(ours.map((resource) => resource.type)).size).toBe(6);
    for (const { type, sourcePosition, stackTrace = [] } of ours) {
      expect(sourcePosition, type).toMatch(/\/test\/resources\/engine\.test\.ts#\d+,\d+$/);
      expect(stackTrace.length, type).toBeGreaterThan(0);
      expect(stackTrace.length, type).toBeLessThanOrEqual(4);
      expect(JSON.stringify(stackTrace), type).not.toMatch(/@pulumi\/pulumi|node:|\/runtime\//);
    }
  }, 60_000);

  it("keeps credentials and the webhook secret out of the stored state", async () => {
    const stored = await storedState(stack);
    const outputs = await stack.outputs();
    expect(stored).toContain(outputs.organizationId?.value as string);
    expect(stored).not.toContain(handle.partner.clientSecret);
    expect(stored).not.toContain(outputs.webhookSecret?.value as string);
    for (const token of handle.partner.tokens) expect(stored).not.toContain(token);
  }, 60_000);

  it("destroys everything, cancelling subscriptions before deleting the organisation (e)", async () => {
    const organizationId = (await stack.outputs()).organizationId?.value as string;
    const destroy = await stack.destroy();
    expect(destroy.summary.result).toBe("succeeded");
    expect(destroy.summary.resourceChanges?.delete).toBe(8);
    expect(await client.getOrganization(organizationId)).toBeUndefined();
    expect(await client.listOrganizations()).toEqual([]);
  }, 180_000);
});

describe("objects created outside Pulumi", () => {
  it("are adopted with importId, changing nothing, and destroyed cleanly (f)", async () => {
    const org = await client.createOrganization({ name: "Imported Ltd" });
    const group = await client.createDomainGroup({ organizationId: org.id, name: "imported" });
    await client.createDomain({
      organizationId: org.id,
      domain: "imported.example",
      type: "sending",
      groupId: group.id,
    });
    const hook = await client.createWebhook({
      name: "imported hook",
      ownerId: handle.partner.id,
      url: "https://hooks.imported.example/dmarc",
      events: ["domain.created"],
    });

    const stack = await createTestStack({
      projectName: "tenant-import",
      config: handle.stackConfig,
      program: async () => {
        const organization = new dmarc.Organization("imported", { name: "Imported Ltd", importId: org.id });
        const domain = new dmarc.Domain("imported-domain", {
          organizationId: organization.organizationId,
          domain: "imported.example",
          type: "sending",
          groupId: group.id,
          importId: `${org.id}/imported.example`,
        });
        const webhook = new dmarc.Webhook("imported-hook", {
          name: "imported hook",
          url: "https://hooks.imported.example/dmarc",
          events: ["domain.created"],
          importId: hook.objectId,
        });
        return {
          name: organization.name,
          record: domain.setupRecord,
          events: webhook.events,
        };
      },
    });
    const requestsBefore = await handle.control<{ byRoute: Record<string, number> }>("GET", "/stats");
    try {
      const up = await stack.up();
      expect(up.summary.resourceChanges).toEqual({ create: 4 });
      // Adopted, not created: no create call reached the service.
      const requestsAfter = await handle.control<{ byRoute: Record<string, number> }>("GET", "/stats");
      for (const route of [
        "POST /v1/organizations",
        "POST /v1/domains",
        "POST /v1/domains/batch",
        "POST /v1/webhooks",
      ]) {
        expect(requestsAfter.byRoute[route] ?? 0).toBe(requestsBefore.byRoute[route] ?? 0);
      }
      expect(up.outputs.name?.value).toBe("Imported Ltd");
      expect((up.outputs.record?.value as dmarc.DnsSetupRecord | undefined)?.host).toBe("_dmarc.imported.example");

      const preview = await stack.preview();
      expect(preview.changeSummary).toEqual({ same: 4 });
    } finally {
      await stack.destroy();
      await stack.workspace.removeStack(stack.name);
    }
    expect(await client.getOrganization(org.id)).toBeUndefined();
    expect(await client.getWebhook(hook.objectId)).toBeUndefined();
    await client.deleteDomainGroup(org.id, group.id);
  }, 180_000);
});

describe("bad inputs", () => {
  async function previewFailure(projectName: string, program: () => Promise<Record<string, unknown>>) {
    const stack = await createTestStack({ projectName, config: handle.stackConfig, program });
    const before = apiRequestCount();
    try {
      const failure = await stack.preview().then(
        () => "preview succeeded",
        (error: Error) => error.message,
      );
      // Refused by check, before any call to the service.
      expect(apiRequestCount()).toBe(before);
      return failure;
    } finally {
      await stack.workspace.removeStack(stack.name);
    }
  }

  it("fail at preview naming the resource, the field, the value and what is allowed, with no API call (g)", async () => {
    const domainFailure = await previewFailure("tenant-bad-domain", async () => {
      new dmarc.Domain("bad-domain", {
        organizationId: "org_000000000000000000000000",
        domain: "Not A Domain!",
        groupId: "dmngrp_000000000000000000000000",
        type: "mailing" as "sending",
      });
      return {};
    });
    expect(domainFailure).toContain("dmarc:Domain resource 'bad-domain'");
    expect(domainFailure).toContain('Domain input "domain" must be a lower-case domain name');
    expect(domainFailure).toContain('got "Not A Domain!"');
    expect(domainFailure).toContain(
      'Domain input "type" Invalid option: expected one of "sending"|"parked"; got "mailing"',
    );

    const webhookFailure = await previewFailure("tenant-bad-webhook", async () => {
      new dmarc.Webhook("bad-hook", {
        name: "bad",
        url: "http://hooks.example.com/dmarc",
        events: ["domain.deleted" as "domain.created"],
      });
      return {};
    });
    expect(webhookFailure).toContain("dmarc:Webhook resource 'bad-hook'");
    expect(webhookFailure).toContain('Webhook input "url" must be an https:// URL');
    expect(webhookFailure).toContain('Webhook input "events.0"');
    expect(webhookFailure).toContain('got "domain.deleted"');
  }, 120_000);

  it("names the missing configuration key at preview", async () => {
    const stack = await createTestStack({
      projectName: "tenant-no-config",
      program: async () => {
        new dmarc.Organization("unconfigured", { name: "Nobody" });
        return {};
      },
      env: { DMARC_BASE_URL: "", DMARC_CLIENT_ID: "", DMARC_CLIENT_SECRET: "", DMARC_ACCESS_TOKEN: "" },
    });
    try {
      const failure = await stack.preview().then(
        () => "preview succeeded",
        (error: Error) => error.message,
      );
      expect(failure).toContain("pulumi config set dmarc:baseUrl");
      expect(failure).toContain("DMARC_BASE_URL");
    } finally {
      await stack.workspace.removeStack(stack.name);
    }
  }, 120_000);
});
