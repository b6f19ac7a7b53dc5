import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type * as pulumi from "@pulumi/pulumi";
import { LocalWorkspace, type ProjectSettings } from "@pulumi/pulumi/automation";
import * as dmarc from "pulumi-dmarc-partner";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectRoot } from "../../scripts/project.mjs";
import { generateSdks } from "../../scripts/sdk/index.mjs";
import { compileNodejsSdk } from "../../scripts/sdk/packages.mjs";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { createTestStack, uniqueStackName, useEngine } from "../support/engine";
import { buildGoSdk, compilePythonSdk, readGenerated, type SdkResource } from "../support/sdkTools";
import { serviceShape } from "../support/serviceShape";

// The SDKs Pulumi's code generators make from the plugin's schema (npm run
// sdk), each checked with its language's tools where this machine has them,
// and the TypeScript one used by a program: the same tenant declared through
// it (the plugin serving it) and through the dynamic resources leaves the
// service in the same state.

const ENGINE_TIMEOUT = 600_000;

interface Sdk {
  Organization: SdkResource;
  DomainGroup: SdkResource;
  Domain: SdkResource;
  Webhook: SdkResource;
  Subscription: SdkResource;
  Invitation: SdkResource;
  getPriceIdOutput(args: Record<string, unknown>): pulumi.Output<{ priceId: string }>;
}

/** One customer as both programs declare it. */
const tenant = {
  name: "Hooli",
  group: "Production",
  domains: ["hooli.example", "hooli-mail.example"],
  webhook: { name: "Hooli events", url: "http://127.0.0.1:9/hooli", events: ["domain.created"] },
  admin: "ops@hooli.example",
};

function throughSdk(sdk: Sdk) {
  return async () => {
    const org = new sdk.Organization("hooli", { name: tenant.name });
    const group = new sdk.DomainGroup("hooli-group", { organizationId: org.organizationId, name: tenant.group });
    for (const domain of tenant.domains)
      new sdk.Domain(domain, { organizationId: org.organizationId, domain, groupId: group.groupId });
    new sdk.Webhook("hooli-events", tenant.webhook);
    new sdk.Subscription("hooli-plan", {
      organizationId: org.organizationId,
      priceId: sdk.getPriceIdOutput({ plan: "Business", frequency: "yearly" }).priceId,
    });
    new sdk.Invitation("hooli-admin", { organizationId: org.organizationId, email: tenant.admin });
  };
}

function throughDynamicResources() {
  return async () => {
    const org = new dmarc.Organization("hooli", { name: tenant.name });
    const group = new dmarc.DomainGroup("hooli-group", { organizationId: org.organizationId, name: tenant.group });
    for (const domain of tenant.domains)
      new dmarc.Domain(domain, { organizationId: org.organizationId, domain, groupId: group.groupId });
    new dmarc.Webhook("hooli-events", tenant.webhook as dmarc.WebhookArgs);
    new dmarc.Subscription("hooli-plan", {
      organizationId: org.organizationId,
      priceId: dmarc.getPriceId({ plan: "Business", frequency: "yearly" }),
    });
    new dmarc.Invitation("hooli-admin", { organizationId: org.organizationId, email: tenant.admin });
  };
}

const read = readGenerated;

describe("the SDKs generated from the plugin's schema", () => {
  let emulator: EmulatorHandle;
  let work: string;
  let sdks: Record<string, string>;

  beforeAll(async () => {
    emulator = await startTestEmulator();
    work = mkdtempSync(join(tmpdir(), "dmarc-sdk-"));
    sdks = await generateSdks(join(work, "sdk"));
  }, ENGINE_TIMEOUT);

  afterAll(async () => {
    await emulator?.emulator.close();
    rmSync(work, { recursive: true, force: true });
  });

  it(
    "TypeScript: compiles against the installed @pulumi/pulumi, every type and function in it",
    async () => {
      const folder = sdks.nodejs as string;
      expect(read(folder, "organization.ts")).toContain("export class Organization extends pulumi.CustomResource");
      expect(read(folder, "webhook.ts")).toContain('additionalSecretOutputs: ["secret"]');
      expect(read(folder, "getPriceId.ts")).toContain("export function getPriceIdOutput(");
      const sdk = createRequire(join(folder, "package.json"))(await compileNodejsSdk(folder)) as Sdk;
      expect(Object.keys(sdk)).toEqual(
        expect.arrayContaining(["Organization", "DomainGroup", "Domain", "DomainVerification", "Rfc2136Record"]),
      );
    },
    ENGINE_TIMEOUT,
  );

  it(
    "Go: builds against the engine's sdk/v3",
    async () => {
      const folder = sdks.go as string;
      expect(read(folder, "dmarc/organization.go")).toContain("func NewOrganization(");
      expect(read(folder, "dmarc/rfc2136Record.go")).toContain('"keySecret"');
      await buildGoSdk(folder);
    },
    ENGINE_TIMEOUT,
  );

  it("Python: byte-compiles, its resources and functions named in Python's words", async () => {
    const folder = sdks.python as string;
    expect(read(folder, "pulumi_dmarc/organization.py")).toContain("class Organization(pulumi.CustomResource):");
    expect(read(folder, "pulumi_dmarc/get_price_id.py")).toContain("def get_price_id(");
    await compilePythonSdk(folder, "pulumi_dmarc");
    expect(existsSync(join(folder, "pulumi_dmarc", "__pycache__"))).toBe(true);
  });

  it(".NET: its project, resources, functions and icon", () => {
    const folder = sdks.dotnet as string;
    expect(read(folder, "DmarcPartner.Dmarc.csproj")).toContain("<PackageIcon>logo.png</PackageIcon>");
    expect(read(folder, "Organization.cs")).toContain(
      "public partial class Organization : global::Pulumi.CustomResource",
    );
    expect(read(folder, "GetPriceId.cs")).toContain("public static class GetPriceId");
  });

  it(
    "TypeScript: declares the same tenant as the dynamic resources, leaving the service in the same state",
    async () => {
      const env = await useEngine();
      const sdk = createRequire(join(sdks.nodejs as string, "package.json"))("./bin/index.js") as Sdk;
      const projectName = "dmarc-sdk";
      // A project names a plugin folder as Pulumi.yaml's `plugins.providers`; the Automation API's type lacks it.
      const projectSettings = {
        name: projectName,
        runtime: "nodejs",
        plugins: { providers: [{ name: "dmarc", path: join(projectRoot, "provider", "bin") }] },
      } as ProjectSettings;
      const viaSdk = await LocalWorkspace.createStack(
        { stackName: uniqueStackName("sdk"), projectName, program: throughSdk(sdk) },
        { workDir: work, envVars: env, projectSettings },
      );
      await viaSdk.setAllConfig(emulator.stackConfig);
      await viaSdk.up();
      const sdkShape = await serviceShape(emulator);
      expect(JSON.stringify(sdkShape)).toContain("hooli-mail.example");
      await viaSdk.destroy();
      await viaSdk.workspace.removeStack(viaSdk.name);
      await emulator.control("POST", "/reset");

      const viaDynamic = await createTestStack({
        projectName: "dmarc-sdk-dynamic",
        program: throughDynamicResources(),
        config: emulator.stackConfig,
      });
      await viaDynamic.up();
      expect(await serviceShape(emulator)).toEqual(sdkShape);
      await viaDynamic.destroy();
      await viaDynamic.workspace.removeStack(viaDynamic.name);
    },
    ENGINE_TIMEOUT,
  );
});
