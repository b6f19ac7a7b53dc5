// `npm run demo`: the whole story of the spec on a laptop. Starts the
// emulator and a webhook receiver, runs one `pulumi up` of the root program
// (which publishes the DMARC record and waits for the service to verify it),
// shows the signed webhook events and prints the stack outputs. The stack stays up; `npm run demo -- --destroy`
// removes it. Run through scripts/run.mjs, which installs, builds and sets
// the engine environment first.

import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { LocalWorkspace } from "@pulumi/pulumi/automation/index.js";
import { startEmulator } from "dmarc-partner-emulator";
import { createWebhookReceiver, isEvent } from "pulumi-dmarc-partner/receiver";
import { describeInterruption } from "pulumi-dmarc-partner/recovery";
import { projectRoot } from "./project.mjs";

const USAGE = `usage: npm run demo [-- options]
  --destroy              destroy the demo stack (and forget the emulator's saved state)
  --show-secrets         print secret outputs (webhook secret, sign-in link) in clear
  --stack <name>         stack to use (default demo)
  --emulator-port <n>    port of the emulator (default 4010; 0 picks a free one)
  --receiver-port <n>    port of the webhook receiver (default 4011; 0 picks a free one)
  --dns-port <n>         UDP and TCP port of the emulator's DNS zone (default 4053; 0 picks a free one)
  --dns-resolver <h:p>   verify against this DNS server instead of the emulator's simulated zone;
                         publish the printed record there yourself while pulumi up waits
  --wait <seconds>       how long pulumi up waits for the verification (default 90)`;

const { values: options } = parseArgs({
  options: {
    destroy: { type: "boolean", default: false },
    "show-secrets": { type: "boolean", default: false },
    stack: { type: "string", default: "demo" },
    "emulator-port": { type: "string", default: "4010" },
    "receiver-port": { type: "string", default: "4011" },
    "dns-port": { type: "string", default: "4053" },
    "dns-resolver": { type: "string" },
    wait: { type: "string", default: "90" },
    help: { type: "boolean", default: false },
  },
});
if (options.help) {
  console.log(USAGE);
  process.exit(0);
}

const STACK = options.stack;
/** Deliveries kept while the webhook's secret is unknown; the emulator sends a handful. */
const MAX_HELD_DELIVERIES = 100;
/** The verified up is over: its domain.verified event is held or on its way. */
const EVENT_WAIT_MS = 15_000;
const demoDir = join(projectRoot, ".cache", "demo");
const emulatorState = join(demoDir, `${STACK}-emulator-state.json`);
const dnsKeyFile = join(demoDir, `${STACK}-dns-key.json`);
const started = Date.now();

function step(message) {
  const seconds = ((Date.now() - started) / 1000).toFixed(1).padStart(5);
  console.log(`\n[demo ${seconds}s] ${message}`);
}

function fail(message, hint) {
  console.error(`\n[demo] ${message}${hint ? `\n[demo] what to do: ${hint}` : ""}`);
  process.exitCode = 1;
}

/** What to run when an earlier demo was killed in the middle of `up` (its lock or pending operations are left). */
function interruptionHint(error) {
  const hint = describeInterruption(error, { stackName: STACK, workDir: projectRoot });
  return (
    hint &&
    `${hint} The demo's stack lives in ${process.env.PULUMI_BACKEND_URL}: give the command that PULUMI_BACKEND_URL, and the PULUMI_CONFIG_PASSPHRASE scripts/engine.mjs sets.`
  );
}

function show(value, secret) {
  if (secret && !options["show-secrets"]) return "[secret] (npm run demo -- --show-secrets to print it)";
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

/**
 * The TSIG key the emulator's zone takes updates signed with, kept beside its
 * state: the stack records the key, so the next run's emulator must take it too.
 */
function demoDnsKey() {
  if (existsSync(dnsKeyFile)) return JSON.parse(readFileSync(dnsKeyFile, "utf8"));
  const key = { name: "demo-update", algorithm: "hmac-sha256", secret: randomBytes(32).toString("base64") };
  writeFileSync(dnsKeyFile, JSON.stringify(key), { mode: 0o600 });
  return key;
}

mkdirSync(demoDir, { recursive: true });
const cleanup = [];
async function stopAll() {
  while (cleanup.length > 0) await cleanup.pop()();
}
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    stopAll().finally(() => process.exit(130));
  });
}

try {
  step(`starting the emulator (state kept in ${emulatorState})`);
  const emulator = await startEmulator({
    port: Number(options["emulator-port"]),
    stateFile: emulatorState,
    // Webhook retries in seconds rather than minutes; DNS checked four times a
    // second, so `up` ends within about a second of the record being written.
    retryScale: 0.01,
    dns: {
      resolver: options["dns-resolver"],
      checkIntervalMs: 250,
      windowMs: Number(options.wait) * 1000,
      port: Number(options["dns-port"]),
      tsigKey: demoDnsKey(),
    },
    logger: false,
  }).catch((error) => {
    throw new Error(
      `the emulator could not start: ${error.message}. If another emulator or demo runs, stop it or pass --emulator-port and --dns-port.`,
    );
  });
  cleanup.push(() => emulator.close());
  const partner = emulator.partners[0];
  console.log(
    `  ${emulator.url}, partner "${partner.name}" (${partner.id}), answering as the ${emulator.profile} profile says (DMARC_EMULATOR_PROFILE=published|guides)`,
  );
  if (emulator.dnsServer) {
    console.log(`  DNS zone on ${emulator.dnsServer}, taking RFC 2136 updates signed with key ${emulator.dnsKey.name}`);
  }

  // The provider and the program read credentials from the environment, so
  // they never enter the stack's config file or its state.
  const stack = await LocalWorkspace.createOrSelectStack(
    { stackName: STACK, workDir: projectRoot },
    { envVars: { DMARC_CLIENT_ID: partner.clientId, DMARC_CLIENT_SECRET: partner.clientSecret } },
  );

  // Set on every run: the emulator's port may differ from the previous run's.
  await stack.setAllConfig({
    "dmarc:baseUrl": { value: emulator.url },
    "dmarc:partnerId": { value: partner.id },
  });

  if (options.destroy) {
    step("pulumi destroy");
    await stack.destroy({ onOutput: (out) => process.stdout.write(out) });
    await stack.workspace.removeStack(STACK);
    await emulator.close();
    cleanup.length = 0;
    rmSync(emulatorState, { force: true });
    rmSync(dnsKeyFile, { force: true });
    step("done: the demo stack and the emulator's saved state are gone");
  } else {
    step("starting the webhook receiver");
    // The webhook's secret exists only once `pulumi up` has created it. Until
    // then the receiver answers 503 (the emulator retries later) and keeps a
    // copy of each delivery, verified and shown as soon as the secret is known.
    const held = new Map();
    let receiver;
    let onVerified;
    const verified = new Promise((resolve) => {
      onVerified = resolve;
    });
    const server = createServer(async (request, response) => {
      const chunks = [];
      for await (const chunk of request) chunks.push(chunk);
      const delivery = { body: Buffer.concat(chunks), headers: request.headers };
      if (!receiver) {
        const id = request.headers["webhook-id"];
        if (typeof id === "string" && held.size < MAX_HELD_DELIVERIES) held.set(id, delivery);
        response.writeHead(503).end();
        return;
      }
      const result = await receiver.receive(delivery);
      response.writeHead(result.status).end(result.outcome === "accepted" ? undefined : JSON.stringify(result.body));
    });
    await new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(Number(options["receiver-port"]), "127.0.0.1", () => resolve(undefined));
    }).catch((error) => {
      throw new Error(`the receiver could not listen: ${error.message}. Pass --receiver-port.`);
    });
    const receiverUrl = `http://127.0.0.1:${/** @type {import("node:net").AddressInfo} */ (server.address()).port}/hooks/dmarc`;
    console.log(`  ${receiverUrl}`);
    cleanup.push(() => new Promise((resolve) => server.close(() => resolve())));

    await stack.setAllConfig({
      "dmarc-partner-demo:webhookUrl": { value: receiverUrl },
      "dmarc-partner-demo:verificationTimeout": { value: `${Number(options.wait)}s` },
    });
    // Without the emulator's zone, the record is published by hand while `up` waits for the verification.
    if (emulator.dnsServer) {
      await stack.setAllConfig({
        "dmarc-partner-demo:dnsServer": { value: emulator.dnsServer },
        "dmarc-partner-demo:dnsKeyName": { value: emulator.dnsKey.name },
        "dmarc-partner-demo:dnsKeyAlgorithm": { value: emulator.dnsKey.algorithm },
        "dmarc-partner-demo:dnsKeySecret": { value: emulator.dnsKey.secret, secret: true },
      });
    } else {
      await stack.removeAllConfig([
        "dmarc-partner-demo:dnsServer",
        "dmarc-partner-demo:dnsKeyName",
        "dmarc-partner-demo:dnsKeyAlgorithm",
        "dmarc-partner-demo:dnsKeySecret",
      ]);
    }

    step(
      options["dns-resolver"]
        ? `pulumi up; publish the record it prints at the DNS server ${options["dns-resolver"]} while it waits for the verification`
        : "pulumi up (organisation, group, webhook, domain, DNS record by RFC 2136, verification, admin, plan, sign-in link)",
    );
    const up = await stack.up({ onOutput: (out) => process.stdout.write(out) });
    const outputs = up.outputs;
    const domainName = outputs.dmarcRecord.value.host.replace(/^_dmarc\./, "");

    receiver = createWebhookReceiver({
      secret: outputs.webhookSecret.value,
      onEvent: async (event, delivery) => {
        console.log(`  received ${event.metadata.eventName} (webhook-id ${delivery.webhookId}), signature verified`);
        if (isEvent(event, "domain.verified") && event.data.domain === domainName) onVerified(event);
      },
    });
    if (held.size > 0) step("deliveries that arrived before the webhook's secret was known");
    for (const delivery of held.values()) {
      const result = await receiver.receive(delivery);
      if (result.outcome === "rejected") console.log(`  rejected a held delivery: ${JSON.stringify(result.body)}`);
    }

    if ((up.summary.resourceChanges?.create ?? 0) > 0) {
      let timer;
      const event = await Promise.race([
        verified,
        new Promise((resolve) => {
          timer = setTimeout(() => resolve(undefined), EVENT_WAIT_MS);
        }),
      ]);
      clearTimeout(timer);
      if (event) {
        console.log(
          `  domain.verified: ${event.data.domain} ${event.data.verificationStatus}${event.data.reason ? ` (${event.data.reason})` : ""}`,
        );
      } else {
        fail(`the receiver got no domain.verified event within ${EVENT_WAIT_MS / 1000}s of the verified up`);
      }
    }

    step("stack outputs");
    const secretOutputs = new Set(["webhookSecret", "adminSignInLink"]);
    for (const [name, output] of Object.entries(outputs)) {
      console.log(`  ${name}: ${show(output.value, output.secret || secretOutputs.has(name)).replace(/\n/g, "\n  ")}`);
    }
    step(
      `done in ${((Date.now() - started) / 1000).toFixed(1)}s. The stack "${STACK}" stays up (its objects live in the emulator's saved state).\n` +
        "  Run the demo again for a no-change update, or remove everything with: npm run demo -- --destroy",
    );
  }
} catch (error) {
  // The engine's own output was streamed above; its error repeats all of it.
  const engineFailed = error?.constructor?.name === "CommandError";
  fail(
    engineFailed ? "the Pulumi engine reported an error (its output is above)" : (error?.message ?? String(error)),
    // A lock or pending operations left by an earlier demo that was killed: recovery comes first.
    interruptionHint(error) ?? "read the Diagnostics above; fix the cause and rerun the same command",
  );
} finally {
  await stopAll();
}
