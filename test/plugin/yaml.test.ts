import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { projectRoot } from "../../scripts/project.mjs";
import { type EmulatorHandle, partnerClient, startTestEmulator } from "../support/emulator";
import { type PluginProject, pluginProject } from "../support/pluginProject";

// A Pulumi YAML program against the emulator through the provider plugin:
// from nothing to a verified domain in one `up` (its record published by the
// plugin's Rfc2136Record into the emulator's zone), a subscription picked by
// plan name, an invitation and a webhook; then no change, a rename in place,
// refresh and destroy, with nothing left behind.

const ENGINE_TIMEOUT = 240_000;

const zoneKey = {
  name: "yaml-update",
  algorithm: "hmac-sha256" as const,
  secret: randomBytes(32).toString("base64"),
};

/** The tenant program of test/fixtures/plugin/tenant.yaml, as a partner writes it. */
const tenantProgram = parse(readFileSync(join(projectRoot, "test", "fixtures", "plugin", "tenant.yaml"), "utf8"));

describe("a Pulumi YAML program through the provider plugin", () => {
  let emulator: EmulatorHandle;
  let project: PluginProject;

  beforeAll(async () => {
    emulator = await startTestEmulator({ dns: { port: 0, checkIntervalMs: 250, tsigKey: zoneKey } });
    project = await pluginProject("dmarc-yaml", {
      ...emulator.stackConfig,
      "dmarc-yaml:organizationName": { value: "Acme Corp" },
      "dmarc-yaml:dnsServer": { value: emulator.emulator.dnsServer ?? "" },
      "dmarc-yaml:dnsKeyName": { value: zoneKey.name },
      "dmarc-yaml:dnsKeySecret": { value: zoneKey.secret, secret: true },
    });
  }, ENGINE_TIMEOUT);

  afterAll(async () => {
    await project?.remove();
    await emulator?.emulator.close();
  }, ENGINE_TIMEOUT);

  const client = () => partnerClient(emulator);

  it(
    "reaches a verified domain in one up, with a subscription, an invitation and a webhook",
    async () => {
      project.write(tenantProgram);
      await project.ok(["up", "--yes", "--skip-preview"]);
      const outputs = await project.outputs();
      expect(outputs).toMatchObject({ verified: true, subscription: "active" });
      expect(String(outputs.webhookSecret)).toMatch(/^whsec_/);
      const organizations = await client().listOrganizations();
      expect(organizations.map((organization) => organization.name)).toEqual(["Acme Corp"]);
      const domains = await client().listDomains(String(outputs.organizationId));
      expect(domains).toMatchObject([{ domain: "acme.example", domainVerified: true }]);
    },
    ENGINE_TIMEOUT,
  );

  it(
    "keeps the secrets encrypted in the state",
    async () => {
      const { stdout } = await project.ok(["stack", "export"]);
      const outputs = await project.outputs();
      expect(stdout).not.toContain(String(outputs.webhookSecret));
      expect(stdout).not.toContain(zoneKey.secret);
      expect(stdout).not.toContain(emulator.partner.clientSecret);
    },
    ENGINE_TIMEOUT,
  );

  it(
    "previews no change, then renames the organisation in place",
    async () => {
      await project.ok(["preview", "--expect-no-changes"]);
      const before = (await project.outputs()).organizationId;
      await project.ok(["config", "set", "dmarc-yaml:organizationName", "Acme Corporation"]);
      const { stdout } = await project.ok(["up", "--yes", "--skip-preview"]);
      expect(stdout).toMatch(/~ 1 updated/);
      expect((await project.outputs()).organizationId).toBe(before);
      expect((await client().listOrganizations()).map((organization) => organization.name)).toEqual([
        "Acme Corporation",
      ]);
    },
    ENGINE_TIMEOUT,
  );

  it(
    "refreshes with no change, and destroys everything",
    async () => {
      const refreshed = await project.ok(["refresh", "--yes", "--skip-preview"]);
      expect(refreshed.stdout).not.toMatch(/~ \d+ updated/);
      await project.ok(["destroy", "--yes", "--skip-preview"]);
      expect(await client().listOrganizations()).toEqual([]);
      const state = JSON.parse((await project.ok(["stack", "export"])).stdout);
      expect(state.deployment.resources ?? []).toEqual([]);
    },
    ENGINE_TIMEOUT,
  );
});
