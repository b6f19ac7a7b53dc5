import * as pulumi from "@pulumi/pulumi";
import * as dmarc from "pulumi-dmarc-partner";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { createTestStack, useEngine } from "../support/engine";

// A stack made with the tenants-yaml example before its component moved into
// the package keeps its resources when the program switches to dmarc.Tenant.

let emulator: EmulatorHandle;

beforeAll(async () => {
  await useEngine();
  emulator = await startTestEmulator();
});

afterAll(async () => {
  await emulator?.emulator.close();
});

/** The example's former component, as its stacks recorded it. */
class ExampleTenant extends pulumi.ComponentResource {
  constructor(key: string) {
    super("dmarc-tenants:index:Tenant", key, {});
    const organization = new dmarc.Organization(key, { name: "Sierra" }, { parent: this });
    const organizationId = organization.organizationId;
    new dmarc.DomainGroup(`${key}/group`, { organizationId, name: "Main" }, { parent: this });
    const priceId = dmarc.getPriceId({ plan: "Starter" });
    new dmarc.Subscription(`${key}/subscription`, { organizationId, priceId }, { parent: this });
    this.registerOutputs({});
  }
}

describe("the example's stacks and the packaged Tenant", () => {
  it("take over the example's resources without creating or deleting any", async () => {
    const stack = await createTestStack({
      projectName: "dmarc-tenant-alias",
      config: emulator.stackConfig,
      program: async () => {
        new ExampleTenant("sierra");
      },
    });
    try {
      expect((await stack.up()).summary.result).toBe("succeeded");
      stack.workspace.program = async () => {
        new dmarc.Tenant("sierra", { name: "Sierra", group: "Main", plan: { name: "Starter" } });
      };
      const preview = await stack.preview();
      expect(preview.changeSummary).not.toHaveProperty("create");
      expect(preview.changeSummary).not.toHaveProperty("delete");
      expect(preview.changeSummary).not.toHaveProperty("replace");
    } finally {
      await stack.destroy();
      await stack.workspace.removeStack(stack.name);
    }
  }, 600_000);
});
