import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Stack } from "@pulumi/pulumi/automation";
import * as dmarc from "pulumi-dmarc-partner";
import { createClient } from "pulumi-dmarc-partner/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { createTestStack } from "../support/engine";

// The service moves to another address after `up`: with `dmarc:baseUrl`
// changed, refresh and destroy given `runProgram` reach the new address (the
// engine otherwise keeps the settings of the last `up`), and the state
// written at the old address keeps working.

const folder = mkdtempSync(join(tmpdir(), "dmarc-moved-"));
const stateFile = join(folder, "service.json");
let before: EmulatorHandle | undefined;
let after: EmulatorHandle | undefined;
let stack: Stack;

function program() {
  const org = new dmarc.Organization("moved-org", { name: "Moved Ltd" });
  const group = new dmarc.DomainGroup("moved-group", { organizationId: org.organizationId, name: "main" });
  return { organizationId: org.organizationId, groupId: group.groupId };
}

beforeAll(async () => {
  before = await startTestEmulator({ stateFile });
  stack = await createTestStack({
    projectName: "dmarc-moved-service",
    program: async () => program(),
    config: before.stackConfig,
  });
});

afterAll(async () => {
  await stack?.workspace.removeStack(stack.name, { force: true }).catch(() => undefined);
  await before?.emulator.close();
  await after?.emulator.close();
  rmSync(folder, { recursive: true, force: true });
});

describe("a service that moved to another address", () => {
  it("is refreshed and destroyed at its new address once dmarc:baseUrl follows it", async () => {
    const up = await stack.up();
    const organizationId = up.outputs.organizationId?.value as string;
    await before?.emulator.close();
    before = undefined;

    after = await startTestEmulator({ stateFile });
    await stack.setConfig("dmarc:baseUrl", { value: after.emulator.url });
    const client = createClient({
      baseUrl: after.emulator.url,
      clientId: after.partner.clientId,
      clientSecret: after.partner.clientSecret,
    });
    expect((await client.getOrganization(organizationId))?.name).toBe("Moved Ltd");

    const refreshed = await stack.refresh({ runProgram: true });
    expect(refreshed.summary.resourceChanges).toEqual({ same: 3 });

    const destroyed = await stack.destroy({ runProgram: true });
    expect(destroyed.summary.resourceChanges?.delete).toBe(3);
    expect(await client.listOrganizations()).toEqual([]);
  }, 300_000);
});
