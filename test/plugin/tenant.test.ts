import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { type PluginProject, pluginProject } from "../support/pluginProject";
import { serviceShape } from "../support/serviceShape";
import { tenantComponentProgram as tenantProgram, typeScriptTenantShape } from "../support/typeScriptTenant";

// The Tenant as the plugin's component, from Pulumi YAML: one block makes a
// whole customer, its records published by RFC 2136 and a domain verified
// in the same `up`, leaving the service as the TypeScript Tenant leaves it;
// its mistakes are refused at preview in the inventory's words.

const ENGINE_TIMEOUT = 300_000;

const zoneKey = {
  name: "tenant-update",
  algorithm: "hmac-sha256" as const,
  secret: randomBytes(32).toString("base64"),
};

describe("the Tenant component from Pulumi YAML", () => {
  let emulator: EmulatorHandle;
  let project: PluginProject;

  beforeAll(async () => {
    emulator = await startTestEmulator({ dns: { port: 0, checkIntervalMs: 250, tsigKey: zoneKey } });
    project = await pluginProject("dmarc-yaml-tenant", {
      ...emulator.stackConfig,
      "dmarc-yaml-tenant:dnsServer": { value: emulator.emulator.dnsServer ?? "" },
      "dmarc-yaml-tenant:dnsKeyName": { value: zoneKey.name },
      "dmarc-yaml-tenant:dnsKeySecret": { value: zoneKey.secret, secret: true },
    });
  }, ENGINE_TIMEOUT);

  afterAll(async () => {
    await project?.remove();
    await emulator?.emulator.close();
  }, ENGINE_TIMEOUT);

  it(
    "declares a whole customer in one block, leaving the service as the TypeScript Tenant does",
    async () => {
      project.write(tenantProgram);
      const { stdout } = await project.ok(["up", "--yes", "--skip-preview"]);
      expect(stdout).toMatch(/dmarc:index:DomainVerification/);
      const outputs = await project.outputs();
      expect(outputs.subscriptionStatus).toBe("active");
      expect(Object.keys(outputs.records as object).sort()).toEqual(["globex-parked.example", "globex.example"]);
      const viaComponent = await serviceShape(emulator);
      expect(JSON.stringify(viaComponent)).toContain('"domainVerified":true');
      await project.ok(["preview", "--expect-no-changes"]);
      const { stdout: state } = await project.ok(["stack", "export"]);
      expect(state).not.toContain(zoneKey.secret);
      await project.ok(["destroy", "--yes", "--skip-preview"]);
      await emulator.control("POST", "/reset");

      expect(await typeScriptTenantShape(emulator, zoneKey)).toEqual(viaComponent);
    },
    ENGINE_TIMEOUT,
  );

  it(
    "refuses a bad declaration at preview in the inventory's words, every problem at once",
    async () => {
      const before = (await emulator.control<{ requests: number }>("GET", "/stats")).requests;
      project.write({
        resources: {
          initech: {
            type: "dmarc:index:Tenant",
            properties: {
              name: "Initech",
              group: "Main",
              admins: ["not-an-address"],
              domains: [{ name: "Bad..Name" }],
            },
          },
        },
      });
      const preview = await project.run(["preview"]);
      const output = `${preview.stdout}${preview.stderr}`;
      expect(preview.code, output).not.toBe(0);
      expect(output).toMatch(/tenant "initech" admins\[0\]/);
      expect(output).toMatch(/domains\[0\]/);
      expect((await emulator.control<{ requests: number }>("GET", "/stats")).requests).toBe(before);
    },
    ENGINE_TIMEOUT,
  );
});
