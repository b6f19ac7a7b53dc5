import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { StateSnapshot } from "dmarc-partner-emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { useEngine } from "../support/engine";
import { type PluginProject, pluginProject } from "../support/pluginProject";
import { backendFiles, emulatorState, randomPartners, report, secretsOnlyInValueTracing } from "./harness";

// The secrets scan of secrets.test.ts on a stack of the provider plugin: a
// Pulumi YAML program with a partner's client secret, a webhook's signing
// secret (rotated once), a TSIG key's secret and a sign-in link, through up,
// rotation, refresh and destroy with the engine at its most verbose. The
// credentials appear nowhere; the other secrets nowhere but in Pulumi's own
// tracing of property values.

const ENGINE_TIMEOUT = 300_000;
const VERBOSE = ["-v=9", "--logtostderr", "--logflow"];
const [partner] = randomPartners("plugin-secrets");
const zoneKey = {
  name: "secret-update",
  algorithm: "hmac-sha256" as const,
  secret: randomBytes(32).toString("base64"),
};

function program(secretVersion: number) {
  const reference = (path: string) => `\${${path}}`;
  return {
    config: { dnsServer: { type: "string" }, dnsKeySecret: { type: "string", secret: true } },
    resources: {
      org: { type: "dmarc:index:Organization", properties: { name: "Secretive Ltd" } },
      main: {
        type: "dmarc:index:DomainGroup",
        properties: { organizationId: reference("org.organizationId"), name: "main" },
      },
      domain: {
        type: "dmarc:index:Domain",
        properties: {
          organizationId: reference("org.organizationId"),
          domain: "secretive.example",
          groupId: reference("main.groupId"),
        },
      },
      record: {
        type: "dmarc:index:Rfc2136Record",
        properties: {
          server: reference("dnsServer"),
          name: reference("domain.setupRecord.host"),
          type: reference("domain.setupRecord.recordType"),
          value: reference("domain.setupRecord.value"),
          keyName: zoneKey.name,
          keySecret: reference("dnsKeySecret"),
        },
      },
      events: {
        type: "dmarc:index:Webhook",
        properties: {
          name: "events",
          url: "http://127.0.0.1:9/hooks/dmarc",
          events: ["report.received"],
          ownerId: reference("org.organizationId"),
          secretVersion,
        },
      },
      admin: {
        type: "dmarc:index:Invitation",
        properties: { organizationId: reference("org.organizationId"), email: "admin@secretive.example" },
      },
    },
    variables: {
      link: {
        "fn::invoke": {
          function: "dmarc:index:createMagicLink",
          arguments: { userId: reference("admin.email"), organizationId: reference("org.organizationId") },
          return: "url",
        },
      },
    },
    outputs: { webhookSecret: reference("events.secret"), magicLink: reference("link") },
  };
}

describe("secrets through a provider plugin stack's lifecycle", () => {
  let handle: EmulatorHandle;
  let project: PluginProject;
  const display: string[] = [];
  const logs: string[] = [];
  const snapshots: StateSnapshot[] = [];
  const outputs: Record<string, unknown>[] = [];

  const step = async (args: string[]) => {
    const result = await project.ok([...args, ...VERBOSE]);
    display.push(result.stdout);
    logs.push(result.stderr);
    snapshots.push(await emulatorState(handle));
  };

  beforeAll(async () => {
    await useEngine();
    handle = await startTestEmulator({ partners: [partner], dns: { port: 0, checkIntervalMs: 250, tsigKey: zoneKey } });
    project = await pluginProject("plugin-secrets", {
      ...handle.stackConfig,
      "plugin-secrets:dnsServer": { value: handle.emulator.dnsServer ?? "" },
      "plugin-secrets:dnsKeySecret": { value: zoneKey.secret, secret: true },
    });
  }, ENGINE_TIMEOUT);

  afterAll(async () => {
    await project?.remove();
    await handle?.emulator.close();
  }, ENGINE_TIMEOUT);

  it(
    "keeps every secret out of state, export, display and messages, up to destroy",
    async () => {
      project.write(program(0));
      await step(["up", "--yes", "--skip-preview"]);
      outputs.push(await project.outputs());
      project.write(program(1));
      await step(["up", "--yes", "--skip-preview"]);
      outputs.push(await project.outputs());
      await step(["refresh", "--yes", "--skip-preview"]);
      const stored = backendFiles(project.stack).map((file) => readFileSync(file, "utf8"));
      const stackConfig = readFileSync(join(project.folder, `Pulumi.${project.stack}.yaml`), "utf8");
      const exported = (await project.ok(["stack", "export"])).stdout;
      await step(["destroy", "--yes", "--skip-preview"]);

      const credentials = [
        partner?.clientSecret ?? "",
        ...(partner?.tokens ?? []),
        ...new Set(snapshots.flatMap((snapshot) => snapshot.tokens.map((token) => token.token))),
      ];
      const otherSecrets = [
        zoneKey.secret,
        ...new Set(snapshots.flatMap((snapshot) => snapshot.webhooks.map((hook) => hook.secret))),
        ...new Set(snapshots.flatMap((snapshot) => snapshot.magicLinks.map((link) => link.token))),
        ...outputs.flatMap((output) => [String(output.webhookSecret), String(output.magicLink)]),
      ];
      expect(new Set(outputs.map((output) => output.webhookSecret)).size).toBe(2);
      expect(otherSecrets.length).toBeGreaterThanOrEqual(5);

      const kept = {
        "stored state and backend files": stored.join("\n"),
        "stack config file": stackConfig,
        "pulumi stack export": exported,
      };
      for (const [place, text] of Object.entries(kept)) {
        for (const secret of [...credentials, ...otherSecrets])
          expect(text.includes(secret), `${place} contains ${secret.slice(0, 10)}...`).toBe(false);
      }
      // The YAML language host logs its own value tracing to its standard error at -v=9, which the
      // engine displays as the program's output: the displayed lines are held to the logs' rule.
      const lines = [...display, ...logs].join("\n").split("\n");
      const tracing = secretsOnlyInValueTracing(lines, credentials, otherSecrets);
      report("secrets", "provider plugin stack, -v=9 --logtostderr --logflow", {
        lines: lines.length,
        credentialsChecked: credentials.length,
        otherSecretsChecked: otherSecrets.length,
        leaksInStateExportOutputMessages: 0,
        linesOfPulumiValueTracingWithASecret: tracing,
      });
    },
    ENGINE_TIMEOUT,
  );
});
