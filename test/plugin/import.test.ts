import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { DmarcClient } from "pulumi-dmarc-partner/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { FULL } from "../reliability/harness";
import { type EmulatorHandle, partnerClient, startTestEmulator } from "../support/emulator";
import { type PluginProject, pluginProject } from "../support/pluginProject";

// `pulumi import` of every type that has an id, made by raw API calls: the
// plugin reads each object, the code the engine writes for it (Pulumi YAML)
// previews with no change, and a destroy removes what was imported; the
// code as written goes up and is destroyed, round after round; in every
// other round the domain names its group by a literal id, as code imported
// by an earlier plugin did, and the group's delete waits for its domain's.

const ENGINE_TIMEOUT = 240_000;

interface ImportEntry {
  type: string;
  name: string;
  id: string;
}

/** Objects of every importable type, made as a partner's own script would. */
async function madeByHand(client: DmarcClient, partnerId: string): Promise<ImportEntry[]> {
  const organization = await client.createOrganization({ name: "Initech" });
  const group = await client.createDomainGroup({ organizationId: organization.id, name: "Mail" });
  await client.createDomain({
    organizationId: organization.id,
    domain: "initech.example",
    type: "sending",
    groupId: group.id,
  });
  const webhook = await client.createWebhook({
    name: "Initech events",
    url: "http://127.0.0.1:9/events",
    events: ["domain.created"],
    active: true,
    ownerId: partnerId,
  });
  const [plan] = await client.listPlans();
  const price = plan?.prices[0];
  if (!price) throw new Error("the emulator's catalogue has no price");
  const subscription = await client.assignSubscription({ organizationId: organization.id, priceId: price.id });
  await client.inviteUser({
    organizationId: organization.id,
    permissions: { users: [{ email: "admin@initech.example" }], organization: { role: "admin" } },
  });
  return [
    { type: "dmarc:index:Organization", name: "initech", id: organization.id },
    { type: "dmarc:index:DomainGroup", name: "mail", id: `${organization.id}/${group.id}` },
    { type: "dmarc:index:Domain", name: "initechDomain", id: `${organization.id}/initech.example` },
    { type: "dmarc:index:Webhook", name: "events", id: webhook.objectId },
    { type: "dmarc:index:Subscription", name: "plan", id: `${organization.id}/${subscription.id}` },
    { type: "dmarc:index:Invitation", name: "admin", id: `${organization.id}/admin@initech.example` },
  ];
}

/**
 * Rounds of the imported code's up and destroy: one with the group by reference and one by a literal id in
 * `npm test`; ten in `npm run test:reliability`, where a race of the group's delete with its domain's showed.
 */
const ROUNDS = FULL ? 10 : 2;

type Generated = { resources: Record<string, { type: string; properties: Record<string, unknown> }> };

/** Imports `entries` into the project's stack, answering the code the engine wrote. */
async function importInto(project: PluginProject, entries: readonly ImportEntry[]): Promise<Generated> {
  writeFileSync(join(project.folder, "import.json"), JSON.stringify({ resources: entries }));
  const imported = await project.ok([
    "import",
    "--file",
    "import.json",
    "--out",
    "imported.yaml",
    "--protect=false",
    "--yes",
  ]);
  expect(imported.stdout).toMatch(/\+ 6 imported|6 imported/);
  return parse(readFileSync(join(project.folder, "imported.yaml"), "utf8")) as Generated;
}

describe("pulumi import through the provider plugin", () => {
  let emulator: EmulatorHandle;
  let project: PluginProject;
  let client: DmarcClient;
  let entries: ImportEntry[];

  beforeAll(async () => {
    emulator = await startTestEmulator();
    client = partnerClient(emulator);
    entries = await madeByHand(client, emulator.partner.id);
    project = await pluginProject("dmarc-import", emulator.stackConfig);
  }, ENGINE_TIMEOUT);

  afterAll(async () => {
    await project?.remove();
    await emulator?.emulator.close();
  }, ENGINE_TIMEOUT);

  it(
    "imports each of the six types and writes a program that previews with no change",
    async () => {
      const generated = await importInto(project, entries);
      expect(Object.keys(generated.resources).sort()).toEqual(entries.map((entry) => entry.name).sort());
      // Pulumi YAML writes the short form of a token of the package's index module.
      expect(generated.resources.initech).toMatchObject({
        type: "dmarc:Organization",
        properties: { name: "Initech" },
      });
      expect(generated.resources.initechDomain?.properties).toMatchObject({ domain: "initech.example" });
      expect(generated.resources.admin?.properties).toMatchObject({ email: "admin@initech.example", role: "admin" });
      project.write({ resources: generated.resources });
      await project.ok(["preview", "--expect-no-changes"]);
    },
    ENGINE_TIMEOUT,
  );

  it(
    "refers to the organisation and the domain's group by reference in the code it writes; the group's groupId instead changes nothing",
    async () => {
      const generated = parse(readFileSync(join(project.folder, "imported.yaml"), "utf8")) as Generated;
      const organizationReference = "$" + "{initech.id}";
      expect(generated.resources.plan?.properties.organizationId).toBe(organizationReference);
      expect(generated.resources.admin?.properties.organizationId).toBe(organizationReference);
      const domain = generated.resources.initechDomain;
      if (!domain) throw new Error("no domain in the imported program");
      expect(domain.properties.groupId).toBe("$" + "{mail.id}");
      domain.properties.groupId = "$" + "{mail.groupId}";
      project.write({ resources: generated.resources });
      // An up with no change records the references as dependencies, so destroy goes in order.
      await project.ok(["up", "--yes", "--expect-no-changes"]);
    },
    ENGINE_TIMEOUT,
  );

  it(
    "destroys what it imported, leaving nothing behind",
    async () => {
      await project.ok(["destroy", "--yes", "--skip-preview"]);
      expect(await client.listOrganizations()).toEqual([]);
      expect(await client.listWebhooks(emulator.partner.id)).toEqual([]);
    },
    ENGINE_TIMEOUT,
  );

  it(
    `goes up and is destroyed as written, ${ROUNDS} times, leaving nothing behind`,
    async () => {
      for (let round = 1; round <= ROUNDS; round++) {
        const made = await madeByHand(client, emulator.partner.id);
        const generated = await importInto(project, made);
        const domain = generated.resources.initechDomain;
        const groupId = made.find((entry) => entry.name === "mail")?.id.split("/")[1];
        if (round % 2 === 0 && domain && groupId) domain.properties.groupId = groupId;
        project.write({ resources: generated.resources });
        await project.ok(["up", "--yes", "--skip-preview"]);
        await project.ok(["destroy", "--yes", "--skip-preview"]);
        expect(await client.listOrganizations()).toEqual([]);
        expect(await client.listWebhooks(emulator.partner.id)).toEqual([]);
      }
    },
    ROUNDS * ENGINE_TIMEOUT,
  );
});
