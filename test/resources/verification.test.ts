import type { Stack } from "@pulumi/pulumi/automation";
import * as dmarc from "pulumi-dmarc-partner";
import { createClient } from "pulumi-dmarc-partner/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { createTestStack } from "../support/engine";

// DomainVerification through the real engine: Rfc2136Record publishes the
// record into the emulator's simulated zone by RFC 2136 update, and `up`
// ends when the emulator, deciding from DNS data only, has verified it.

type Published = "setup record" | "record without the service's rua" | "nothing";

interface Scenario {
  published: Published;
  timeout: string;
  /** A webhook for domain.verified, whose deliveries carry the service's reasons. */
  webhook: boolean;
}

let handle: EmulatorHandle;

beforeAll(async () => {
  handle = await startTestEmulator({ dns: { checkIntervalMs: 50 } });
});

afterAll(async () => {
  await handle?.emulator.close();
});

function tenant(domainName: string, scenario: () => Scenario) {
  return async () => {
    const current = scenario();
    const organization = new dmarc.Organization("org", { name: `Owner of ${domainName}` });
    const group = new dmarc.DomainGroup("group", { organizationId: organization.organizationId, name: "main" });
    const hooks = current.webhook
      ? [
          new dmarc.Webhook("events", {
            name: "verification events",
            url: "http://127.0.0.1:9/hooks/dmarc",
            events: ["domain.verified"],
          }),
        ]
      : [];
    const domain = new dmarc.Domain(
      "domain",
      { organizationId: organization.organizationId, domain: domainName, groupId: group.groupId },
      { dependsOn: hooks },
    );
    const record =
      current.published === "nothing"
        ? undefined
        : new dmarc.Rfc2136Record("record", {
            server: handle.emulator.dnsServer ?? "",
            keyName: handle.emulator.dnsKey?.name ?? "",
            keySecret: handle.emulator.dnsKey?.secret ?? "",
            name: domain.setupRecord.host,
            type: domain.setupRecord.recordType,
            value:
              current.published === "setup record"
                ? domain.setupRecord.value
                : "v=DMARC1; p=none; rua=mailto:reports@elsewhere.example",
          });
    const verification = new dmarc.DomainVerification("verification", {
      domainId: domain.id,
      recordValue: record?.value,
      timeout: current.timeout,
      pollInterval: "1s",
    });
    return {
      organizationId: organization.organizationId,
      verified: verification.verified,
      policy: verification.policy,
    };
  };
}

async function failedUp(stack: Stack): Promise<{ message: string; output: string }> {
  let output = "";
  const failure = await stack.up({ onOutput: (out) => (output += out) }).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(failure, "up should fail").toBeInstanceOf(Error);
  return { message: (failure as Error).message, output };
}

function typesIn(deployment: { deployment: { resources?: { type: string }[] } }): string[] {
  return (deployment.deployment.resources ?? []).map((resource) => resource.type.split(":").pop() ?? "");
}

async function removeStack(stack: Stack): Promise<void> {
  await stack.destroy();
  await stack.workspace.removeStack(stack.name);
}

describe("DomainVerification through the engine", () => {
  it("one up publishes the record and ends verified; a refresh after the domain is deleted drops it", async () => {
    const scenario: Scenario = { published: "setup record", timeout: "2m", webhook: false };
    const stack = await createTestStack({
      projectName: "verification-published",
      program: tenant("published.example", () => scenario),
      config: handle.stackConfig,
    });
    try {
      const up = await stack.up();
      expect(up.summary.result).toBe("succeeded");
      expect(up.outputs.verified?.value).toBe(true);
      expect(up.outputs.policy?.value).toBe("none");

      const organizationId = up.outputs.organizationId?.value as string;
      const client = createClient({
        baseUrl: handle.emulator.url,
        clientId: handle.partner.clientId,
        clientSecret: handle.partner.clientSecret,
      });
      expect(await client.deleteDomain(organizationId, "published.example")).toBe(true);

      await stack.refresh();
      const types = typesIn(await stack.exportStack());
      expect(types).not.toContain("DomainVerification");
      expect(types).not.toContain("Domain");
      expect(types).toContain("Rfc2136Record");
    } finally {
      await removeStack(stack);
    }
  }, 300_000);

  it("with no record, up times out saying what it saw; once the record is published, the next up verifies", async () => {
    const scenario: Scenario = { published: "nothing", timeout: "3s", webhook: false };
    const stack = await createTestStack({
      projectName: "verification-late",
      program: tenant("late.example", () => scenario),
      config: handle.stackConfig,
    });
    try {
      const { message, output } = await failedUp(stack);
      // Progress is attached to the resource in the engine's output, not to the stack.
      expect(output).toMatch(
        /dmarc:DomainVerification \(verification\):\s+DomainVerification late\.example: waiting for the service to verify it \(timeout 3s\)/,
      );
      expect(message).toContain("late.example was not verified within 3s");
      expect(message).toContain("last seen: no DMARC record at _dmarc.late.example seen yet");
      expect(message).toContain("run pulumi up again to keep waiting");
      expect(typesIn(await stack.exportStack())).not.toContain("DomainVerification");

      scenario.published = "setup record";
      const up = await stack.up();
      expect(up.outputs.verified?.value).toBe(true);
      // Only the record and the verification are new: nothing on the service was made again.
      expect(up.summary.resourceChanges).toMatchObject({ create: 2 });
    } finally {
      await removeStack(stack);
    }
  }, 300_000);

  it("a record without the service's rua fails up with the service's reason and what to publish", async () => {
    const scenario: Scenario = { published: "record without the service's rua", timeout: "2m", webhook: true };
    const stack = await createTestStack({
      projectName: "verification-rejected",
      program: tenant("rejected.example", () => scenario),
      config: handle.stackConfig,
    });
    try {
      const { message } = await failedUp(stack);
      expect(message).toContain("the service did not verify rejected.example: RUA address not found");
      expect(message).toContain("Publish the Domain's setupRecord.value at _dmarc.rejected.example exactly as given");
    } finally {
      await removeStack(stack);
    }
  }, 300_000);
});
