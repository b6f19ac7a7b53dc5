import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

let emulator: EmulatorHandle;
const children: ChildProcess[] = [];

beforeAll(async () => {
  emulator = await startTestEmulator();
});

afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
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
  it("sends nothing more and does not spin on its closed standard error", async () => {
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
    const stats = () => emulator.control<{ requests: number }>("GET", "/stats");
    let sent = 0;
    await until(
      () => pid > 0 && sent >= 5,
      "the provider's first requests",
      60_000,
      async () => {
        sent = (await stats()).requests;
      },
    );
    engine.kill("SIGKILL");
    await exited(engine);
    const orphan = { pid, kill: () => process.kill(pid, "SIGKILL") };
    children.push({ kill: orphan.kill } as unknown as ChildProcess);

    // Within its check's second (and a request in flight), it stops: the count holds still.
    let before = -1;
    let now = (await stats()).requests;
    await until(
      () => before === now,
      "the orphan to stop sending",
      20_000,
      async () => {
        before = now;
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        now = (await stats()).requests;
      },
    );
    expect(now).toBeLessThan(CALLS);
    // Its failed requests were written to a standard error nobody reads any more, and it sits idle.
    const ticks = cpuTicks(pid);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(cpuTicks(pid) - ticks).toBeLessThan(20);
  }, 120_000);
});
