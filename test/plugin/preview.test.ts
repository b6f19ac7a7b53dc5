import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UNKNOWN } from "../../provider/src/runtime/values";
import { type EmulatorHandle, partnerClient, startTestEmulator } from "../support/emulator";
import { type PluginProject, type PreviewStep, pluginProject } from "../support/pluginProject";
import { asPreviewed } from "../support/previewed";
import { loggedArrivals } from "../support/requestLog";

// What a Pulumi YAML program's preview shows of an in-place change through
// the provider plugin is what its `up` does: one update of the resource
// changed, its dependants unchanged (their organisation's and group's ids
// known), nothing replaced, and no request to the service. One stack goes
// through a change of each in-place input of every type and of the Tenant
// component, a few at a time.

const ENGINE_TIMEOUT = 300_000;

const zoneKey = {
  name: "preview-update",
  algorithm: "hmac-sha256" as const,
  secret: randomBytes(32).toString("base64"),
};

/** The values a round of changes declares; each round changes some of them. */
interface Declared {
  organizationName: string;
  onDelete: "delete" | "cancelSubscriptions";
  groupName: string;
  domainGroup: "main" | "spare";
  zone?: string;
  ttl: number;
  pollInterval: string;
  timeout?: string;
  priceId: string;
  keepActiveUntil?: string;
  redirectUrl?: string;
  webhook: { name: string; url: string; events: string[]; active: boolean; secretVersion: number };
  tenant: { name: string; group: string; webhookUrl: string };
}

/** A Pulumi YAML reference: `ref("acme.id")` is the text `${acme.id}`. */
const ref = (path: string) => `$\{${path}}`;

function program(declared: Declared) {
  const organizationId = ref("acme.organizationId");
  const { webhook, tenant } = declared;
  return {
    config: {
      dnsServer: { type: "string" },
      dnsKeyName: { type: "string" },
      dnsKeySecret: { type: "string", secret: true },
    },
    resources: {
      acme: {
        type: "dmarc:index:Organization",
        properties: { name: declared.organizationName, onDelete: declared.onDelete },
      },
      main: { type: "dmarc:index:DomainGroup", properties: { organizationId, name: declared.groupName } },
      spare: { type: "dmarc:index:DomainGroup", properties: { organizationId, name: "Spare" } },
      acmeDomain: {
        type: "dmarc:index:Domain",
        properties: {
          organizationId,
          domain: "acme.example",
          groupId: ref(`${declared.domainGroup}.groupId`),
          ...(declared.zone ? { zone: declared.zone } : {}),
        },
      },
      record: {
        type: "dmarc:index:Rfc2136Record",
        properties: {
          server: ref("dnsServer"),
          name: ref("acmeDomain.setupRecord.host"),
          type: ref("acmeDomain.setupRecord.recordType"),
          value: ref("acmeDomain.setupRecord.value"),
          keyName: ref("dnsKeyName"),
          keySecret: ref("dnsKeySecret"),
          ttl: declared.ttl,
        },
      },
      verified: {
        type: "dmarc:index:DomainVerification",
        properties: {
          domainId: ref("acmeDomain.id"),
          recordValue: ref("record.value"),
          pollInterval: declared.pollInterval,
          ...(declared.timeout ? { timeout: declared.timeout } : {}),
        },
      },
      plan: {
        type: "dmarc:index:Subscription",
        properties: {
          organizationId,
          priceId: declared.priceId,
          ...(declared.keepActiveUntil ? { keepActiveUntil: declared.keepActiveUntil } : {}),
        },
      },
      admin: {
        type: "dmarc:index:Invitation",
        properties: {
          organizationId,
          email: "it@acme.example",
          ...(declared.redirectUrl ? { redirectUrl: declared.redirectUrl } : {}),
        },
      },
      events: { type: "dmarc:index:Webhook", properties: webhook },
      globex: {
        type: "dmarc:index:Tenant",
        properties: {
          name: tenant.name,
          group: tenant.group,
          subscription: "none",
          domains: [{ name: "globex.example" }],
          admins: ["it@globex.example"],
          webhooks: [{ name: "Globex events", url: tenant.webhookUrl, events: ["domain.created"] }],
        },
      },
    },
    outputs: {
      organizationId: ref("acme.organizationId"),
      tenantOrganizationId: ref("globex.organizationId"),
      webhookSecret: ref("events.secret"),
    },
  };
}

/** A step as `<type>::<name>`, the type without its module and parents: `Organization::acme`. */
function labelOf(urn: string): string {
  const [, , type = "", name = ""] = urn.split("::");
  return `${type.split("$").pop()?.split(":").pop()}::${name}`;
}

describe("a plugin program's preview of in-place changes", () => {
  let emulator: EmulatorHandle;
  let project: PluginProject;
  let declared: Declared;
  const logFolder = mkdtempSync(join(tmpdir(), "dmarc-preview-log-"));
  const requestLog = join(logFolder, "requests.jsonl");

  beforeAll(async () => {
    emulator = await startTestEmulator({
      dns: { port: 0, checkIntervalMs: 250, tsigKey: zoneKey },
      requestLogFile: requestLog,
    });
    project = await pluginProject("dmarc-preview", {
      ...emulator.stackConfig,
      "dmarc-preview:dnsServer": { value: emulator.emulator.dnsServer ?? "" },
      "dmarc-preview:dnsKeyName": { value: zoneKey.name },
      "dmarc-preview:dnsKeySecret": { value: zoneKey.secret, secret: true },
    });
  }, ENGINE_TIMEOUT);

  afterAll(async () => {
    await project?.remove();
    await emulator?.emulator.close();
    rmSync(logFolder, { recursive: true, force: true });
  }, ENGINE_TIMEOUT);

  /** A preview's steps and the outputs it shows for each resource it updates, by label, asserting that it sent no request to the service. */
  async function preview(): Promise<{ steps: PreviewStep[]; previewed: Record<string, unknown> }> {
    const from = Date.now();
    const events = await project.previewEvents();
    expect(loggedArrivals(requestLog, from)).toEqual([]);
    const steps = events.flatMap(({ resourcePreEvent: event }) =>
      event
        ? [{ op: event.metadata.op, urn: event.metadata.urn, newState: { inputs: event.metadata.new?.inputs } }]
        : [],
    );
    const previewed = Object.fromEntries(
      events.flatMap(({ resOutputsEvent: event }) =>
        event?.metadata.op === "update" ? [[labelOf(event.metadata.urn), event.metadata.new?.outputs]] : [],
      ),
    );
    return { steps, previewed };
  }

  /** What `up` recorded of each resource the last preview updates, where it showed an output known (see asPreviewed). */
  async function recordedAsPreviewed(previewed: Record<string, unknown>) {
    const { stdout } = await project.ok(["stack", "export"]);
    const { resources } = (JSON.parse(stdout) as { deployment: { resources: { urn: string; outputs?: unknown }[] } })
      .deployment;
    const recordedOf = (label: string) => resources.find((resource) => labelOf(resource.urn) === label)?.outputs;
    return Object.fromEntries(
      Object.entries(previewed).map(([label, outputs]) => [label, asPreviewed(recordedOf(label), outputs)]),
    );
  }

  /** Declares `changes`, previews them as updates of `updated` alone, runs `up`, and previews no change after. */
  async function changeInPlace(changes: Partial<Declared>, updated: string[]) {
    declared = { ...declared, ...changes };
    project.write(program(declared));
    const { steps, previewed } = await preview();
    const changed = steps.filter((step) => step.op !== "same" && !step.urn.includes("pulumi:pulumi:Stack"));
    expect(changed.map((step) => `${step.op} ${labelOf(step.urn)}`).sort()).toEqual(
      updated.map((label) => `update ${label}`).sort(),
    );
    for (const step of steps) expect(JSON.stringify(step.newState?.inputs ?? {})).not.toContain(UNKNOWN);
    const { stdout } = await project.ok(["up", "--yes", "--skip-preview"]);
    expect(stdout).toContain(`~ ${updated.length} updated`);
    expect(Object.keys(previewed).sort()).toEqual([...updated].sort());
    expect(await recordedAsPreviewed(previewed)).toEqual(previewed);
    await project.ok(["preview", "--expect-no-changes"]);
  }

  it(
    "creates the tenant",
    async () => {
      const prices = (await partnerClient(emulator).listPlans()).flatMap((plan) =>
        plan.prices.map((price) => price.id),
      );
      declared = {
        organizationName: "Acme Corp",
        onDelete: "delete",
        groupName: "Main",
        domainGroup: "main",
        ttl: 300,
        pollInterval: "1s",
        priceId: prices[0] ?? "",
        webhook: {
          name: "Acme events",
          url: "http://127.0.0.1:9/events",
          events: ["domain.verified"],
          active: true,
          secretVersion: 0,
        },
        tenant: { name: "Globex", group: "Production", webhookUrl: "http://127.0.0.1:9/globex" },
      };
      project.write(program(declared));
      await project.ok(["up", "--yes", "--skip-preview"]);
      await project.ok(["preview", "--expect-no-changes"]);
    },
    ENGINE_TIMEOUT,
  );

  it(
    "previews renames, a move to another group, a ttl, a poll interval, a renewal, a redirect and a webhook's name as updates",
    async () => {
      const before = await project.outputs();
      await changeInPlace(
        {
          organizationName: "Acme Corporation",
          groupName: "Main mail",
          domainGroup: "spare",
          ttl: 600,
          pollInterval: "2s",
          keepActiveUntil: new Date(Date.now() + 2 * 365 * 86_400_000).toISOString().slice(0, 10),
          redirectUrl: "https://acme.example/welcome",
          webhook: { ...declared.webhook, name: "Acme deliveries" },
          tenant: { ...declared.tenant, name: "Globex Corporation" },
        },
        [
          "Organization::acme",
          "DomainGroup::main",
          "Domain::acmeDomain",
          "Rfc2136Record::record",
          "DomainVerification::verified",
          "Subscription::plan",
          "Invitation::admin",
          "Webhook::events",
          "Organization::globex",
        ],
      );
      const after = await project.outputs();
      expect(after.organizationId).toBe(before.organizationId);
      expect(after.tenantOrganizationId).toBe(before.tenantOrganizationId);
      const names = (await partnerClient(emulator).listOrganizations()).map((organization) => organization.name);
      expect(names.sort()).toEqual(["Acme Corporation", "Globex Corporation"]);
    },
    ENGINE_TIMEOUT,
  );

  it(
    "previews a deletion mode, a move back, a timeout, a price, a redirect, a webhook's endpoint and a tenant's group as updates",
    async () => {
      const prices = (await partnerClient(emulator).listPlans()).flatMap((plan) =>
        plan.prices.map((price) => price.id),
      );
      await changeInPlace(
        {
          onDelete: "cancelSubscriptions",
          domainGroup: "main",
          ttl: 900,
          timeout: "20m",
          priceId: prices.find((price) => price !== declared.priceId) ?? "",
          redirectUrl: "https://acme.example/start",
          webhook: { ...declared.webhook, url: "http://127.0.0.1:9/acme", events: ["domain.created"] },
          tenant: { ...declared.tenant, group: "Production mail" },
        },
        [
          "Organization::acme",
          "Domain::acmeDomain",
          "Rfc2136Record::record",
          "DomainVerification::verified",
          "Subscription::plan",
          "Invitation::admin",
          "Webhook::events",
          "DomainGroup::globex/group",
        ],
      );
    },
    ENGINE_TIMEOUT,
  );

  it(
    "previews a domain's zone, a paused, rotated webhook and a tenant's webhook endpoint as updates, and destroys everything",
    async () => {
      const before = String((await project.outputs()).webhookSecret);
      await changeInPlace(
        {
          onDelete: "delete",
          zone: "acme.example",
          webhook: { ...declared.webhook, active: false, secretVersion: 1 },
          tenant: { ...declared.tenant, webhookUrl: "http://127.0.0.1:9/globex-events" },
        },
        ["Organization::acme", "Domain::acmeDomain", "Webhook::events", "Webhook::globex/webhook/Globex events"],
      );
      expect(String((await project.outputs()).webhookSecret)).not.toBe(before);
      await project.ok(["destroy", "--yes", "--skip-preview"]);
      expect(await partnerClient(emulator).listOrganizations()).toEqual([]);
      expect(await partnerClient(emulator).listWebhooks(emulator.partner.id)).toEqual([]);
    },
    ENGINE_TIMEOUT,
  );
});
