// `npm run demo`: the whole story of the spec on a laptop. Starts the
// emulator and a webhook receiver, runs `pulumi up` on the root program,
// publishes the DMARC record, waits for the signed domain.verified event and
// prints the stack outputs. The stack stays up; `npm run demo -- --destroy`
// removes it. Run through scripts/run.mjs, which installs, builds and sets
// the engine environment first.

import { mkdirSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { LocalWorkspace } from "@pulumi/pulumi/automation/index.js";
import { startEmulator } from "dmarc-partner-emulator";
import { createRequestListener, isEvent } from "pulumi-dmarc-partner/receiver";
import { describeInterruption } from "pulumi-dmarc-partner/recovery";
import { projectRoot } from "./engine.mjs";

const USAGE = `usage: npm run demo [-- options]
  --destroy              destroy the demo stack (and forget the emulator's saved state)
  --show-secrets         print secret outputs (webhook secret, sign-in link) in clear
  --stack <name>         stack to use (default demo)
  --emulator-port <n>    port of the emulator (default 4010; 0 picks a free one)
  --receiver-port <n>    port of the webhook receiver (default 4011; 0 picks a free one)
  --dns-resolver <h:p>   verify against this DNS server instead of the emulator's simulated zone;
                         publish the printed record there yourself while the demo waits
  --wait <seconds>       how long to wait for domain.verified (default 90)`;

const { values: options } = parseArgs({
  options: {
    destroy: { type: "boolean", default: false },
    "show-secrets": { type: "boolean", default: false },
    stack: { type: "string", default: "demo" },
    "emulator-port": { type: "string", default: "4010" },
    "receiver-port": { type: "string", default: "4011" },
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
const demoDir = join(projectRoot, ".cache", "demo");
const emulatorState = join(demoDir, `${STACK}-emulator-state.json`);
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
    // Webhook retries in seconds rather than minutes, DNS checked every second.
    retryScale: 0.01,
    dns: { resolver: options["dns-resolver"], checkIntervalMs: 1000, windowMs: Number(options.wait) * 1000 },
    logger: false,
  }).catch((error) => {
    throw new Error(
      `the emulator could not start: ${error.message}. If another emulator or demo runs, stop it or pass --emulator-port.`,
    );
  });
  cleanup.push(() => emulator.close());
  const partner = emulator.partners[0];
  console.log(`  ${emulator.url}, partner "${partner.name}" (${partner.id})`);

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
    step("done: the demo stack and the emulator's saved state are gone");
  } else {
    step("starting the webhook receiver");
    // The webhook's secret exists only once `pulumi up` has created it; until
    // then the receiver answers 503 and the emulator retries the delivery.
    let listener;
    let onVerified;
    const verified = new Promise((resolve) => {
      onVerified = resolve;
    });
    const receiver = createServer((request, response) => {
      if (!listener) {
        response.writeHead(503).end();
        return;
      }
      listener(request, response);
    });
    await new Promise((resolve, reject) => {
      receiver.once("error", reject);
      receiver.listen(Number(options["receiver-port"]), "127.0.0.1", resolve);
    }).catch((error) => {
      throw new Error(`the receiver could not listen: ${error.message}. Pass --receiver-port.`);
    });
    const receiverUrl = `http://127.0.0.1:${receiver.address().port}/hooks/dmarc`;
    console.log(`  ${receiverUrl}`);
    cleanup.push(() => new Promise((resolve) => receiver.close(() => resolve())));

    await stack.setConfig("dmarc-partner-demo:webhookUrl", { value: receiverUrl });

    step("pulumi up (the root program: organisation, group, webhook, domain, admin, plan, sign-in link)");
    const up = await stack.up({ onOutput: (out) => process.stdout.write(out) });
    const outputs = up.outputs;
    const record = outputs.dmarcRecord.value;

    listener = createRequestListener({
      secret: outputs.webhookSecret.value,
      onEvent: async (event, delivery) => {
        console.log(`  received ${event.metadata.eventName} (webhook-id ${delivery.webhookId}), signature verified`);
        if (isEvent(event, "domain.verified") && event.data.domain === record.host.replace(/^_dmarc\./, "")) {
          onVerified(event);
        }
      },
    });

    if (options["dns-resolver"]) {
      step(`publish this record at the DNS server ${options["dns-resolver"]} now; the emulator checks it every second`);
      console.log(`  ${record.host}. IN ${record.recordType} "${record.value}"`);
    } else {
      step(`publishing ${record.recordType} ${record.host} to the emulator's simulated DNS zone`);
      const published = await fetch(`${emulator.url}/_emulator/dns/records`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: record.host, type: record.recordType, values: [record.value] }),
      });
      if (!published.ok) throw new Error(`publishing the record failed: ${published.status} ${await published.text()}`);
    }
    if ((up.summary.resourceChanges?.create ?? 0) === 0) {
      // A later run: the domain was checked when it was added, so ask the emulator to look again now.
      await fetch(`${emulator.url}/_emulator/domains/${record.host.replace(/^_dmarc\./, "")}/verify`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ organizationId: outputs.organizationId.value }),
      });
    }

    step(`waiting for domain.verified at the receiver (at most ${options.wait}s)`);
    let timer;
    const event = await Promise.race([
      verified,
      new Promise((resolve) => {
        timer = setTimeout(() => resolve(undefined), Number(options.wait) * 1000);
      }),
    ]);
    clearTimeout(timer);
    if (!event) {
      fail(
        `no domain.verified event within ${options.wait}s`,
        "check that the record above is published where the emulator looks (--dns-resolver), or raise --wait",
      );
    } else {
      console.log(
        `  domain.verified: ${event.data.domain} ${event.data.verificationStatus}${event.data.reason ? ` (${event.data.reason})` : ""}`,
      );
    }

    // Stack outputs change only when the program runs, so a refreshing up, not a bare refresh.
    step("pulumi up --refresh (reads the verification status back into the stack outputs)");
    const refreshed = (await stack.up({ refresh: true, onOutput: (out) => process.stdout.write(out) })).outputs;

    step("stack outputs");
    const secretOutputs = new Set(["webhookSecret", "adminSignInLink"]);
    for (const [name, output] of Object.entries(refreshed)) {
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
