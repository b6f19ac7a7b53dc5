import * as pulumi from "@pulumi/pulumi";
import type { Stack } from "@pulumi/pulumi/automation";
import { Tenant, type TenantArgs } from "pulumi-dmarc-partner";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serviceClient } from "../fleet/support";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { createTestStack } from "../support/engine";

// A JavaScript program's Tenant, through the real engine: a plan given as a
// string stops the preview in the inventory's words instead of a TypeError in
// the update, and a bad value the program gives as an Output is refused in the
// same words once resolved (a secret one never quoted), before any resource
// of the tenant is made.

let emulator: EmulatorHandle;
const stacks: Stack[] = [];

async function stackOf(projectName: string, args: () => Record<string, unknown>): Promise<Stack> {
  const stack = await createTestStack({
    projectName,
    config: emulator.stackConfig,
    program: async () => {
      new Tenant("acme", args() as unknown as TenantArgs);
    },
  });
  stacks.push(stack);
  return stack;
}

/** What the engine's run failed with: its message and output. */
async function failure(run: Promise<unknown>): Promise<string> {
  try {
    await run;
  } catch (error) {
    return String(error);
  }
  throw new Error("the run succeeded");
}

describe("a program's Tenant with wrong arguments, through the engine", () => {
  beforeAll(async () => {
    emulator = await startTestEmulator();
  });

  afterAll(async () => {
    try {
      for (const stack of stacks) await stack.workspace.removeStack(stack.name, { force: true });
    } finally {
      await emulator?.emulator.close();
    }
  });

  it("stops the preview naming the tenant, the plan and what it must be", async () => {
    const stack = await stackOf("tenant-args-plan", () => ({ name: "Acme", group: "Main", plan: "Business" }));
    const text = await failure(stack.preview());
    expect(text).toContain('tenant "acme" plan: must be an object with name (and frequency, currency); got "Business"');
    expect(text).not.toMatch(/TypeError|toLowerCase/);
  }, 300_000);

  it("refuses values known only later once resolved, quoting no secret, and makes nothing", async () => {
    const stack = await stackOf("tenant-args-later", () => ({
      name: pulumi.output(42),
      group: pulumi.secret(["s3cret-group"]),
      subscription: "none",
    }));
    const text = await failure(stack.up());
    expect(text).toContain('tenant "acme" name: must be a string; got 42');
    expect(text).toContain('tenant "acme" group: must be a string; got "[secret]"');
    expect(text).not.toContain("s3cret-group");
    expect(await serviceClient(emulator).listOrganizations()).toEqual([]);
  }, 300_000);
});
