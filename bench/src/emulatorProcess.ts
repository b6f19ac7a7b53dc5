// The emulator in a process of its own, forked by the bench: its request
// handling then neither competes with the Pulumi program on the bench's event
// loop nor hides in the bench's CPU and memory figures.

import { startEmulator } from "dmarc-partner-emulator";

export interface EmulatorReady {
  type: "ready";
  url: string;
  partner: { id: string; clientId: string; clientSecret: string };
}

// Verification looks up every unverified domain at each interval; the bench
// publishes no records, so those lookups would only add load that the
// service's own DNS checks never put on a partner's pipeline.
const DNS_CHECK_INTERVAL_MS = 3_600_000;

async function main(): Promise<void> {
  const emulator = await startEmulator({ port: 0, host: "127.0.0.1", dns: { checkIntervalMs: DNS_CHECK_INTERVAL_MS } });
  const partner = emulator.partners[0];
  if (!partner) throw new Error("the emulator started without partners");
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    emulator.close().finally(() => process.exit(0));
  };
  process.on("message", (message) => {
    if (message === "close") stop();
  });
  // The bench went away without asking: nothing is left to serve.
  process.on("disconnect", stop);
  const ready: EmulatorReady = {
    type: "ready",
    url: emulator.url,
    partner: { id: partner.id, clientId: partner.clientId, clientSecret: partner.clientSecret },
  };
  process.send?.(ready);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench emulator: ${(error as Error).message}\n`);
  process.exit(1);
});
