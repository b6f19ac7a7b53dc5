import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Stack } from "@pulumi/pulumi/automation";
import type { StateSnapshot } from "dmarc-partner-emulator";
import * as dmarc from "pulumi-dmarc-partner";
import { createRequestListener, type WebhookEvent } from "pulumi-dmarc-partner/receiver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { createTestStack, storedState, useEngine } from "../support/engine";
import {
  backendFiles,
  emulatorState,
  eventually,
  pulumiOk,
  randomPartners,
  report,
  secretsOnlyInValueTracing,
} from "./harness";
import { startTamperingProxy, type TamperingProxy } from "./proxy";

// A full lifecycle through the engine (up, webhook secret rotation, refresh,
// destroy) with a magic link issued by the program, the engine at its most
// verbose, and operations that fail on purpose. Afterwards the credentials
// (client secrets, bearer tokens) must appear nowhere, and webhook secrets
// and magic links nowhere but inside Pulumi's own tracing of property values
// (see README.md: the engine and the Node.js SDK print resolved values,
// secrets included, at these verbosities; only configuration secrets are
// masked). The deliveries the service signs reach the receiver kit through
// the rotation.

const [alpha, beta] = randomPartners("secrets");
const VERBOSE = { logVerbosity: 9, logToStdErr: true, logFlow: true };

interface Captured {
  /** Everything shown to the user: progress, diagnostics, outputs. */
  display: string[];
  /** The engine's and plugins' logs (--logtostderr). */
  logs: string[];
  /** Messages of the operations that failed on purpose. */
  failures: string[];
}

const captured: Captured = { display: [], logs: [], failures: [] };
const snapshots: StateSnapshot[] = [];
const outputs: Record<string, unknown>[] = [];

let handle: EmulatorHandle;
let receiverFront: Server;
let deliver: (request: IncomingMessage, response: ServerResponse) => void;
const received: { event: WebhookEvent; webhookId: string }[] = [];

function receiveWith(secret: string | readonly string[]) {
  deliver = createRequestListener({
    secret,
    onEvent: async (event, context) => {
      received.push({ event, webhookId: context.webhookId });
    },
  });
}

beforeAll(async () => {
  handle = await startTestEmulator({ partners: [alpha, beta] });
  // Nothing verifies deliveries until the first `up` has told the secret.
  deliver = (_request, response) => {
    response.writeHead(503).end();
  };
  receiverFront = createServer((request, response) => deliver(request, response));
  await new Promise<void>((resolve) => receiverFront.listen(0, "127.0.0.1", resolve));
});

afterAll(async () => {
  receiverFront?.closeAllConnections();
  await new Promise((resolve) => receiverFront?.close(resolve));
  await handle?.emulator.close();
});

interface Declared {
  secretVersion: number;
  webhookName: string;
  /** An address to send a sign-in link to that was never invited. */
  linkFor?: string;
}

function lifecycleProgram(declared: () => Declared) {
  const { port } = receiverFront.address() as AddressInfo;
  return async () => {
    const current = declared();
    const organization = new dmarc.Organization("org", { name: "Secretive Ltd" });
    const group = new dmarc.DomainGroup("main", { organizationId: organization.organizationId, name: "main" });
    // Reports, and so deliveries, are about a domain of the organisation.
    new dmarc.Domain("domain", {
      organizationId: organization.organizationId,
      domain: "secretive.example",
      groupId: group.groupId,
    });
    const webhook = new dmarc.Webhook("events", {
      name: current.webhookName,
      url: `http://127.0.0.1:${port}/hooks/dmarc`,
      events: ["report.received"],
      ownerId: organization.organizationId,
      secretVersion: current.secretVersion,
    });
    const admin = new dmarc.Invitation("admin", {
      organizationId: organization.organizationId,
      email: "admin@secretive.example",
    });
    const link = dmarc.createMagicLink({
      userId: current.linkFor ?? admin.email,
      organizationId: organization.organizationId,
      redirectUri: "https://app.example.com/welcome",
    });
    return {
      organizationId: organization.organizationId,
      webhookId: webhook.webhookId,
      webhookSecret: webhook.secret,
      magicLink: link,
    };
  };
}

describe("secrets through a full lifecycle", () => {
  let stack: Stack;
  let declared: Declared = { secretVersion: 0, webhookName: "events" };
  /** A client secret tried on purpose, checked for like the real ones. */
  const wrongSecret = `client-secret-${randomBytes(16).toString("hex")}`;
  const keep = async (result: { stdout: string; stderr: string; outputs?: Record<string, { value: unknown }> }) => {
    captured.display.push(result.stdout);
    captured.logs.push(result.stderr);
    if (result.outputs) {
      outputs.push(Object.fromEntries(Object.entries(result.outputs).map(([key, output]) => [key, output.value])));
    }
    snapshots.push(await emulatorState(handle));
  };

  beforeAll(async () => {
    stack = await createTestStack({
      projectName: "reliability-secrets",
      program: lifecycleProgram(() => declared),
      config: handle.stackConfig,
    });
  });

  afterAll(async () => {
    await stack?.workspace.removeStack(stack.name, { force: true });
  });

  it("creates the tenant, and the receiver kit verifies what the service signs", async () => {
    const up = await stack.up(VERBOSE);
    await keep(up);
    expect(up.outputs.webhookSecret?.secret).toBe(true);
    expect(up.outputs.magicLink?.secret).toBe(true);
    receiveWith(up.outputs.webhookSecret?.value as string);
    await handle.control("POST", "/reports", {
      organizationId: up.outputs.organizationId?.value,
      domain: "secretive.example",
    });
    await eventually(
      "the first report to be received",
      async () => received.length,
      (count) => count === 1,
    );
    expect(received[0]?.event.metadata.eventName).toBe("report.received");
  }, 180_000);

  it("rotates the webhook secret: the old one stops verifying, the new one does, each delivery once", async () => {
    const before = await stack.outputs();
    declared = { ...declared, secretVersion: 1 };
    const up = await stack.up(VERBOSE);
    await keep(up);
    const oldSecret = before.webhookSecret?.value as string;
    const newSecret = up.outputs.webhookSecret?.value as string;
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(oldSecret);
    expect(up.outputs.webhookId?.value).toBe(before.webhookId?.value);

    // The receiver still holds the old secret: the service's next delivery is refused...
    await handle.control("POST", "/reports", {
      organizationId: up.outputs.organizationId?.value,
      domain: "secretive.example",
    });
    const refused = await eventually(
      "a delivery refused for its signature",
      () => emulatorState(handle),
      (snapshot) => snapshot.deliveries.some((delivery) => delivery.history.some((entry) => entry.statusCode === 401)),
    );
    const retried = refused.deliveries.find((delivery) => delivery.history.some((entry) => entry.statusCode === 401));
    // ...and once it holds the new one, a retry of that same delivery is accepted, once.
    receiveWith(newSecret);
    await eventually(
      "the retried delivery to be received",
      async () => received.length,
      (count) => count === 2,
    );
    expect(received[1]?.webhookId).toBe(retried?.id);
    expect(received.filter((entry) => entry.webhookId === retried?.id)).toHaveLength(1);
  }, 180_000);

  it("refreshes", async () => {
    await keep(await stack.refresh(VERBOSE));
  }, 180_000);

  it("reports operations that fail on purpose without quoting a secret", async () => {
    // Wrong client secret: the token call is refused.
    await stack.setConfig("dmarc:clientSecret", { value: wrongSecret, secret: true });
    declared = { ...declared, webhookName: "renamed events" };
    captured.failures.push(
      await stack.up().then(
        () => "the up succeeded",
        (error: Error) => error.message,
      ),
    );
    await stack.setConfig("dmarc:clientSecret", { value: alpha.clientSecret, secret: true });

    // A gateway that quotes back the whole request, token included, and the webhook's secret in its error.
    const hookSecret = snapshots.at(-1)?.webhooks[0]?.secret ?? "";
    const hostile: TamperingProxy = await startTamperingProxy(handle.emulator.url, [
      {
        name: "echo",
        method: "PUT",
        path: /^\/v1\/webhooks\//,
        forward: false,
        answer: (_upstream, incoming) => ({
          status: 400,
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            error: "ValidationError",
            message: `rejected ${incoming.method} ${incoming.path} with authorization ${incoming.headers.authorization} and body ${incoming.body}; the webhook's secret is ${hookSecret}`,
            details: {
              invalidFields: [{ field: "authorization", message: incoming.headers.authorization?.slice(7) ?? "" }],
            },
          }),
        }),
      },
    ]);
    try {
      await stack.setConfig("dmarc:baseUrl", { value: hostile.url });
      captured.failures.push(
        await stack.up().then(
          () => "the up succeeded",
          (error: Error) => error.message,
        ),
      );
      expect(hostile.applied.echo).toBeGreaterThan(0);
    } finally {
      await stack.setConfig("dmarc:baseUrl", { value: handle.emulator.url });
      await hostile.close();
    }

    // A sign-in link for someone never invited.
    declared = { ...declared, webhookName: "events", linkFor: "nobody@secretive.example" };
    captured.failures.push(
      await stack.up().then(
        () => "the up succeeded",
        (error: Error) => error.message,
      ),
    );
    declared = { ...declared, linkFor: undefined };
    snapshots.push(await emulatorState(handle));

    expect(captured.failures[0]).toContain("obtain an access token failed");
    expect(captured.failures[1]).toContain("update webhook failed: PUT /v1/webhooks/");
    expect(captured.failures[2]).toContain("create magic link failed");
  }, 300_000);

  it("destroys, leaving no credential, webhook secret or magic link in state, export, output or messages", async () => {
    const { name: projectName } = await stack.workspace.projectSettings();
    const stored = [
      await storedState(stack),
      ...backendFiles(projectName, stack.name).map((file) => readFileSync(file, "utf8")),
    ];
    const stackConfig = readFileSync(join(stack.workspace.workDir, `Pulumi.${stack.name}.yaml`), "utf8");
    // `pulumi stack export` as an operator runs it, without --show-secrets.
    const exported = (
      await pulumiOk(["stack", "export", "--stack", stack.name], stack.workspace.workDir, await useEngine())
    ).stdout;
    await keep(await stack.destroy(VERBOSE));

    const credentials = [
      ...[alpha, beta].flatMap((partner) => [partner.clientSecret, ...partner.tokens]),
      wrongSecret,
      ...new Set(snapshots.flatMap((snapshot) => snapshot.tokens.map((token) => token.token))),
    ];
    const webhookSecrets = [
      ...new Set([
        ...snapshots.flatMap((snapshot) => snapshot.webhooks.map((hook) => hook.secret)),
        ...outputs.map((output) => String(output.webhookSecret)),
      ]),
    ];
    const magicLinks = [
      ...new Set([
        ...snapshots.flatMap((snapshot) => snapshot.magicLinks.map((link) => link.token)),
        ...outputs.map((output) => (output.magicLink as { url: string }).url),
      ]),
    ];
    expect(credentials.length).toBeGreaterThanOrEqual(6);
    expect(webhookSecrets.length).toBeGreaterThanOrEqual(2);
    expect(magicLinks.length).toBeGreaterThanOrEqual(4);

    const everywhereButLogs = {
      "stored state and backend files": stored.join("\n"),
      "stack config file": stackConfig,
      "pulumi stack export": exported,
      "displayed output": captured.display.join("\n"),
      "failure messages": captured.failures.join("\n"),
    };
    for (const [place, text] of Object.entries(everywhereButLogs)) {
      for (const secret of [...credentials, ...webhookSecrets, ...magicLinks]) {
        expect(text.includes(secret), `${place} contains ${secret.slice(0, 10)}...`).toBe(false);
      }
    }

    const logLines = captured.logs.join("\n").split("\n");
    const tracing = secretsOnlyInValueTracing(logLines, credentials, [...webhookSecrets, ...magicLinks]);
    report("secrets", "full lifecycle, -v=9 --logtostderr --logflow", {
      logLines: logLines.length,
      credentialsChecked: credentials.length,
      webhookSecretsChecked: webhookSecrets.length,
      magicLinksChecked: magicLinks.length,
      failuresChecked: captured.failures.length,
      leaksInStateExportOutputMessages: 0,
      linesOfPulumiValueTracingWithASecret: tracing,
    });
  }, 180_000);
});
