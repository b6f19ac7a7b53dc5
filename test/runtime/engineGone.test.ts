import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inFlight, isRunning, stats } from "../reliability/harness";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { exited, until } from "../support/providerProcess";

// A provider process whose engine is killed: it sends nothing more within a
// second or two (the partner's budget is no longer spent for a run that
// cannot record anything), and its writes to the engine's closed standard
// error do not spin it. The provider is started as Pulumi starts it: its
// host script at `cmd/dynamic-provider/index.js`, a child of the engine,
// its standard error a pipe the engine reads.

const PROVIDER_HOST = join(__dirname, "..", "..", "provider", "dist", "providerHost.js");
const CONFIG = join(__dirname, "..", "..", "provider", "dist", "runtime", "config.js");
const CALLS = 60;
const PACE = 120;
/** How long the service holds each request once the engine is about to die: longer than the checks below take. */
const HOLD_MS = 25_000;
/** How long the orphan is watched for spinning: clock ticks are 10 ms, so a tenth of a core is IDLE_WINDOW_MS / 100 ticks. */
const IDLE_WINDOW_MS = 4_000;

let emulator: EmulatorHandle;
const children: ChildProcess[] = [];

beforeAll(async () => {
  emulator = await startTestEmulator();
});

afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  await emulator?.control("DELETE", "/faults");
  await emulator?.emulator.close();
});

/** Pulumi's dynamic provider host as far as this guard can tell: the script's path, loading the package's provider host. */
function providerScript(): string {
  const folder = join(mkdtempSync(join(tmpdir(), "dmarc-engine-gone-")), "cmd", "dynamic-provider");
  mkdirSync(folder, { recursive: true });
  const script = join(folder, "index.js");
  writeFileSync(
    script,
    `require(${JSON.stringify(PROVIDER_HOST)});
     const { clientFrom, settingsFrom } = require(${JSON.stringify(CONFIG)});
     // As Pulumi's host does: an unhandled failure is written to standard error.
     process.on("uncaughtException", (error) => console.error(error.stack));
     process.on("unhandledRejection", (error) => console.error(error.stack));
     process.stdout.write(process.pid + "\\n");
     const client = clientFrom(settingsFrom(() => undefined));
     for (let call = 0; call < ${CALLS}; call++)
       client.listPlans().then(() => console.error("answered"), (error) => console.error("failed: " + error.message));
     setInterval(() => {}, 60_000);`,
  );
  return script;
}

/** CPU time (user and system, in clock ticks) the process has used so far. */
function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return Number(fields[11]) + Number(fields[12]);
}

describe("a provider process whose engine is gone", () => {
  it("sends nothing more, does not spin on its closed standard error, and exits once its requests in flight are answered", async () => {
    // The engine: starts the provider with its standard error piped to itself, then is killed.
    const engineScript = `
      const { spawn } = require("node:child_process");
      const provider = spawn(process.execPath, [${JSON.stringify(providerScript())}], { stdio: ["ignore", "pipe", "pipe"] });
      provider.stdout.pipe(process.stdout);
      provider.stderr.on("data", () => {});`;
    const engine = spawn(process.execPath, ["-e", engineScript], {
      env: { PATH: process.env.PATH ?? "", ...emulator.env, DMARC_REQUESTS_PER_MINUTE: String(PACE) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    children.push(engine);
    let pid = 0;
    engine.stdout?.on("data", (chunk: Buffer) => {
      pid ||= Number.parseInt(chunk.toString(), 10);
    });
    const counts = () => stats(emulator);
    let counted = await counts();
    await until(
      () => pid > 0 && counted.requests >= 5,
      "the provider's first requests",
      60_000,
      async () => {
        counted = await counts();
      },
    );
    // The service holds what arrives from now on, so that the engine dies with requests in flight.
    await emulator.control("POST", "/faults", { route: "*", latencyMs: HOLD_MS });
    const held = counted.requests + 2;
    await until(
      () => counted.requests >= held,
      "two requests the service holds",
      60_000,
      async () => {
        counted = await counts();
      },
    );
    engine.kill("SIGKILL");
    await exited(engine);
    children.push({ kill: () => isRunning(pid) && process.kill(pid, "SIGKILL") } as unknown as ChildProcess);

    // Within its check's second, it stops: the count holds still while the held requests wait.
    let before = -1;
    let now = (await counts()).requests;
    await until(
      () => before === now,
      "the orphan to stop sending",
      20_000,
      async () => {
        before = now;
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        now = (await counts()).requests;
      },
    );
    expect(now).toBeLessThan(CALLS);
    // Its failed requests were written to a standard error nobody reads any more: with requests
    // still held by the service, it is alive and idle.
    expect(inFlight(await counts())).toBeGreaterThan(0);
    // Under a tenth of a core, over 4 s: the rejected requests' failures may still be reported in that time.
    const ticks = cpuTicks(pid);
    await new Promise((resolve) => setTimeout(resolve, IDLE_WINDOW_MS));
    expect(cpuTicks(pid) - ticks).toBeLessThan(IDLE_WINDOW_MS / 100);
    expect(inFlight(await counts())).toBeGreaterThan(0);
    expect(isRunning(pid)).toBe(true);

    // Once the service has answered them, it exits by itself: nothing of a killed run stays behind.
    await until(() => !isRunning(pid), "the orphan to exit by itself", HOLD_MS + 30_000);
    expect(inFlight(await counts())).toBe(0);
  }, 180_000);
});
