#!/usr/bin/env node
import { banner, parseCommandLine, USAGE } from "./cli";
import { startEmulator } from "./index";

async function main(): Promise<void> {
  let options: ReturnType<typeof parseCommandLine>;
  try {
    options = parseCommandLine(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`dmarc-emulator: ${(error as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (!options) {
    process.stdout.write(USAGE);
    return;
  }
  const emulator = await startEmulator(options);
  // performance.now() counts from process start, so this includes loading the modules.
  process.stdout.write(banner(emulator, performance.now()));
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    // A second signal while closing means "now".
    if (stopping) process.exit(1);
    stopping = true;
    process.stderr.write(`dmarc-emulator: ${signal}, shutting down\n`);
    emulator.close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`dmarc-emulator: shutdown failed: ${(error as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`dmarc-emulator: ${(error as Error).message}\n`);
  process.exit(1);
});
