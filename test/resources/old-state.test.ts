import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { EngineEvent, Stack } from "@pulumi/pulumi/automation";
import * as dmarc from "pulumi-dmarc-partner";
import { createClient, type DmarcClient } from "pulumi-dmarc-partner/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { createTestStack, storedState } from "../support/engine";

// A stack written by release 0.1.0 (test/fixtures/state-0.1.0, see its
// README), taken over by this package with no manual step: refresh, preview,
// update and destroy through the real engine, against an emulator started
// from the service state of the same moment.

const fixtureDir = fileURLToPath(new URL("../fixtures/state-0.1.0/", import.meta.url));
const fixtureProject = "dmarc-old-state";
const fixtureStack = "release-0-1-0";

interface TenantNames {
  orgName: string;
  groupName: string;
}

/** The fixture's program, declared with this package: same resource names, types and inputs. */
function tenantProgram(names: () => TenantNames) {
  return async () => {
    const { orgName, groupName } = names();
    const org = new dmarc.Organization("old-org", { name: orgName });
    const group = new dmarc.DomainGroup("old-group", { organizationId: org.organizationId, name: groupName });
    const domain = new dmarc.Domain("old-domain", {
      organizationId: org.organizationId,
      domain: "old-state.example",
      groupId: group.groupId,
      setupRecordType: "TXT",
    });
    const hook = new dmarc.Webhook("old-hook", {
      name: "old hook",
      url: "http://127.0.0.1:9/hooks/dmarc",
      events: ["domain.verified"],
    });
    const plan = new dmarc.Subscription("old-plan", {
      organizationId: org.organizationId,
      priceId: dmarc.getPriceId({ plan: "Starter", frequency: "monthly" }),
    });
    const admin = new dmarc.Invitation("old-admin", {
      organizationId: org.organizationId,
      email: "admin@old-state.example",
    });
    return {
      organizationId: org.organizationId,
      groupId: group.groupId,
      record: domain.setupRecord,
      webhookSecret: hook.secret,
      subscriptionId: plan.subscriptionId,
      adminUserId: admin.userId,
    };
  };
}

interface CheckpointResource {
  urn: string;
  type: string;
  id?: string;
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
}

interface Deployment {
  version: number;
  deployment: { resources: CheckpointResource[] } & Record<string, unknown>;
}

interface ServiceState {
  organizations: { id: string; name: string }[];
  domainGroups: { id: string; name: string }[];
  webhooks: { objectId: string; secret: string }[];
}

const fixtureDeployment = JSON.parse(readFileSync(join(fixtureDir, "stack.json"), "utf8")) as Deployment;
const fixtureService = JSON.parse(readFileSync(join(fixtureDir, "emulator-state.json"), "utf8")) as ServiceState;

/**
 * The fixture as the test's stack and service: `pulumi stack import` refuses
 * a deployment whose URNs name another stack (short of --force, which the
 * Automation API does not pass), so the URNs move to the test's stack. And the
 * default provider records the `dmarc:*` config of the last `up`, which
 * refresh and destroy use: the fixture's emulator port is replaced with the
 * test emulator's, as a partner's service address stays the same.
 */
function deploymentFor(stackName: string, baseUrl: string): Deployment {
  const from = `urn:pulumi:${fixtureStack}::${fixtureProject}::`;
  const to = `urn:pulumi:${stackName}::${fixtureProject}::`;
  const text = JSON.stringify(fixtureDeployment)
    .replaceAll(from, to)
    .replaceAll(`${fixtureProject}-${fixtureStack}`, `${fixtureProject}-${stackName}`);
  const deployment = JSON.parse(text) as Deployment;
  for (const resource of deployment.deployment.resources) {
    if (resource.type !== "pulumi:providers:pulumi-nodejs") continue;
    for (const settings of [resource.inputs, resource.outputs]) {
      if (settings?.["dmarc:baseUrl"] !== undefined) settings["dmarc:baseUrl"] = baseUrl;
    }
  }
  return deployment;
}

function checkpointResources(checkpoint: string): CheckpointResource[] {
  return (JSON.parse(checkpoint) as { checkpoint: { latest: { resources: CheckpointResource[] } } }).checkpoint.latest
    .resources;
}

function resourceOfType(resources: CheckpointResource[], type: string): CheckpointResource {
  const found = resources.find((resource) => resource.type === `pulumi-nodejs:dynamic/dmarc:${type}`);
  if (!found) throw new Error(`no ${type} in the checkpoint`);
  return found;
}

const dmarcTypes = ["Organization", "DomainGroup", "Domain", "Webhook", "Subscription", "Invitation"];

function fixtureResource(type: string): CheckpointResource {
  return resourceOfType(fixtureDeployment.deployment.resources, type);
}

/** Operations the engine announced per resource, e.g. `old-org: update`. */
function stepRecorder() {
  const steps: string[] = [];
  const onEvent = (event: EngineEvent) => {
    const metadata = event.resourcePreEvent?.metadata;
    if (!metadata || metadata.type === "pulumi:pulumi:Stack") return;
    const name = metadata.urn.split("::").at(-1);
    steps.push(`${name}: ${metadata.op}`);
  };
  return { steps, onEvent };
}

let handle: EmulatorHandle;
let client: DmarcClient;
let stack: Stack;
let names: TenantNames = { orgName: "Old State Org", groupName: "Old group" };
const serviceDir = mkdtempSync(join(tmpdir(), "dmarc-old-state-"));
const organizationId = fixtureResource("Organization").id as string;
const [, groupId] = (fixtureResource("DomainGroup").id as string).split("/");
const webhookId = fixtureResource("Webhook").id as string;
const checkpointBytes: Record<string, number> = {};

beforeAll(async () => {
  const stateFile = join(serviceDir, "emulator-state.json");
  copyFileSync(join(fixtureDir, "emulator-state.json"), stateFile);
  handle = await startTestEmulator({ stateFile });
  client = createClient({
    baseUrl: handle.emulator.url,
    clientId: handle.partner.clientId,
    clientSecret: handle.partner.clientSecret,
  });
  stack = await createTestStack({
    projectName: fixtureProject,
    program: tenantProgram(() => names),
    config: handle.stackConfig,
  });
  await stack.importStack(deploymentFor(stack.name, handle.emulator.url));
  checkpointBytes.imported = (await storedState(stack)).length;
});

afterAll(async () => {
  process.stdout.write(`old-state checkpoint bytes: ${JSON.stringify(checkpointBytes)}\n`);
  await stack?.workspace.removeStack(stack.name, { force: true });
  await handle?.emulator.close();
  rmSync(serviceDir, { recursive: true, force: true });
});

describe("a stack written by release 0.1.0", () => {
  it("is refreshed by this package, every resource kept and the webhook secret still a secret", async () => {
    const refresh = await stack.refresh();
    expect(refresh.summary.result).toBe("succeeded");
    expect(refresh.summary.resourceChanges?.delete).toBeUndefined();

    const checkpoint = await storedState(stack);
    checkpointBytes.refreshed = checkpoint.length;
    const resources = checkpointResources(checkpoint);
    for (const type of dmarcTypes) expect(resourceOfType(resources, type).id).toBe(fixtureResource(type).id);

    // Read through the serialized provider 0.1.0 recorded: refresh keeps it.
    for (const type of dmarcTypes) {
      expect(resourceOfType(resources, type).outputs?.__provider).toBe(fixtureResource(type).outputs?.__provider);
    }

    const secret = resourceOfType(resources, "Webhook").outputs?.secret as Record<string, unknown>;
    expect(secret).toHaveProperty("ciphertext");
    expect(checkpoint).not.toContain("whsec_");
    expect(checkpoint).not.toContain(handle.partner.clientSecret);
    // Decrypted in memory only: the secret the service issued to 0.1.0.
    const exported = (await stack.exportStack()) as unknown as Deployment;
    const webhook = resourceOfType(exported.deployment.resources, "Webhook");
    expect(webhook.outputs?.secret).toMatchObject({ plaintext: JSON.stringify(fixtureService.webhooks[0]?.secret) });
  }, 180_000);

  it("previews the same program with this package without replacing anything", async () => {
    const recorder = stepRecorder();
    const preview = await stack.preview({ onEvent: recorder.onEvent });
    process.stdout.write(
      `old-state preview: ${JSON.stringify(preview.changeSummary)}\n  ${recorder.steps.join("\n  ")}\n`,
    );
    for (const op of ["create", "delete", "replace", "create-replacement", "delete-replaced"]) {
      expect(preview.changeSummary).not.toHaveProperty(op);
    }
  }, 180_000);

  it("updates it in place on the service", async () => {
    names = { orgName: "Old State Org renamed", groupName: "Old group renamed" };
    const recorder = stepRecorder();
    const up = await stack.up({ onEvent: recorder.onEvent });
    process.stdout.write(
      `old-state up: ${JSON.stringify(up.summary.resourceChanges)}\n  ${recorder.steps.join("\n  ")}\n`,
    );
    const checkpoint = await storedState(stack);
    checkpointBytes.updated = checkpoint.length;
    expect(up.summary.result).toBe("succeeded");
    expect(up.summary.resourceChanges).not.toHaveProperty("replace");
    expect(up.summary.resourceChanges).not.toHaveProperty("create");
    expect(up.outputs.organizationId?.value).toBe(organizationId);
    expect(up.outputs.webhookSecret).toEqual({ value: fixtureService.webhooks[0]?.secret, secret: true });

    expect((await client.getOrganization(organizationId))?.name).toBe("Old State Org renamed");
    expect((await client.getDomainGroup(organizationId, groupId as string))?.name).toBe("Old group renamed");

    // An update records this package's serialized provider; resources left
    // unchanged keep 0.1.0's, so the destroy below still goes through it.
    const resources = checkpointResources(checkpoint);
    for (const type of dmarcTypes) {
      const { inputs, outputs } = resourceOfType(resources, type);
      const expected = ["Organization", "DomainGroup"].includes(type)
        ? inputs?.__provider
        : fixtureResource(type).outputs?.__provider;
      expect(outputs?.__provider, type).toBe(expected);
    }

    const noChange = await stack.up();
    checkpointBytes.upAgain = (await storedState(stack)).length;
    expect(noChange.summary.resourceChanges).toEqual({ same: 7 });
  }, 240_000);

  it("is destroyed, leaving the partner no organisation and no webhook", async () => {
    const destroy = await stack.destroy();
    expect(destroy.summary.result).toBe("succeeded");
    expect(destroy.summary.resourceChanges?.delete).toBe(7);
    expect(await client.listOrganizations()).toEqual([]);
    expect(await client.getWebhook(webhookId)).toBeUndefined();
  }, 180_000);
});
