import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalWorkspace, type ProjectSettings, type Stack } from "@pulumi/pulumi/automation";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectRoot } from "../../scripts/project.mjs";
import { generateSdks } from "../../scripts/sdk/index.mjs";
import { compileNodejsSdk } from "../../scripts/sdk/packages.mjs";
import { type EmulatorHandle, partnerClient, startTestEmulator } from "../support/emulator";
import { uniqueStackName, useEngine } from "../support/engine";
import { loggedArrivals } from "../support/requestLog";
import type { SdkResource } from "../support/sdkTools";

// The organisation's rename through a TypeScript program on the SDK
// generated from the plugin's schema: its preview shows one update and its
// dependants unchanged, sends no request to the service, and is what `up` does.

const ENGINE_TIMEOUT = 300_000;

type Sdk = Record<"Organization" | "DomainGroup" | "Domain" | "Subscription" | "Invitation", SdkResource>;

describe("a TypeScript program on the generated SDK previews a rename as one update", () => {
  let emulator: EmulatorHandle;
  let work: string;
  let stack: Stack;
  let organizationName = "Hooli";
  let requestLog: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "dmarc-preview-sdk-"));
    requestLog = join(work, "requests.jsonl");
    emulator = await startTestEmulator({ requestLogFile: requestLog });
    const { nodejs } = await generateSdks(join(work, "sdk"), ["nodejs"]);
    const folder = nodejs as string;
    const sdk = createRequire(join(folder, "package.json"))(await compileNodejsSdk(folder)) as Sdk;
    const [priceId] = (await partnerClient(emulator).listPlans()).flatMap((plan) => plan.prices.map(({ id }) => id));
    const program = async () => {
      const org = new sdk.Organization("hooli", { name: organizationName });
      const organizationId = org.organizationId;
      const group = new sdk.DomainGroup("hooli-group", { organizationId, name: "Production" });
      for (const domain of ["hooli.example", "hooli-mail.example"])
        new sdk.Domain(domain, { organizationId, domain, groupId: group.groupId });
      new sdk.Subscription("hooli-plan", { organizationId, priceId });
      new sdk.Invitation("hooli-admin", { organizationId, email: "ops@hooli.example" });
      return { organizationId };
    };
    const projectName = "dmarc-preview-sdk";
    // A project names a plugin folder as Pulumi.yaml's `plugins.providers`; the Automation API's type lacks it.
    const projectSettings = {
      name: projectName,
      runtime: "nodejs",
      plugins: { providers: [{ name: "dmarc", path: join(projectRoot, "provider", "bin") }] },
    } as ProjectSettings;
    stack = await LocalWorkspace.createStack(
      { stackName: uniqueStackName("preview-sdk"), projectName, program },
      { workDir: work, envVars: await useEngine(), projectSettings },
    );
    await stack.setAllConfig(emulator.stackConfig);
  }, ENGINE_TIMEOUT);

  afterAll(async () => {
    await stack?.destroy();
    await stack?.workspace.removeStack(stack.name);
    await emulator?.emulator.close();
    if (work) rmSync(work, { recursive: true, force: true });
  }, ENGINE_TIMEOUT);

  it(
    "previews the rename as one update with no request, then updates one organisation",
    async () => {
      await stack.up();
      const before = (await stack.outputs()).organizationId?.value;
      organizationName = "Hooli XYZ";
      const from = Date.now();
      const preview = await stack.preview();
      expect(loggedArrivals(requestLog, from)).toEqual([]);
      const { update, same, ...others } = preview.changeSummary;
      expect({ update, others }).toEqual({ update: 1, others: {} });
      expect(same).toBeGreaterThan(0);
      const result = await stack.up();
      expect(result.summary.resourceChanges).toMatchObject({ update: 1 });
      expect((await stack.outputs()).organizationId?.value).toBe(before);
      expect((await partnerClient(emulator).listOrganizations()).map(({ name }) => name)).toEqual(["Hooli XYZ"]);
      await stack.preview({ expectNoChanges: true });
    },
    ENGINE_TIMEOUT,
  );
});
