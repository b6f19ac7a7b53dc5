import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer, type Server as NetServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { findRunProcesses, inFlightBoundMs, settleOrphans } from "../../provider/src/recovery/orphans";
import { engineAddressOf, runProcessesIn } from "../../provider/src/recovery/processes";
import { settingsFrom } from "../../provider/src/runtime/config";

// Real processes with the command lines of a run's plugins, a real engine
// address (a loopback listener this test opens and closes) and a real
// service (an HTTP server that answers late): what the recovery tells
// apart and how it stops what a killed run left behind.

const folder = realpathSync(mkdtempSync(join(tmpdir(), "dmarc-orphans-")));
const providerScript = join(folder, "node_modules", "@pulumi", "pulumi", "cmd", "dynamic-provider", "index.js");
mkdirSync(join(providerScript, ".."), { recursive: true });
// Stands in for the dynamic provider: calls the service once when told, and may ignore SIGTERM.
writeFileSync(
  providerScript,
  `const http = require("node:http");
const [, , , serviceUrl, ignoreTerm] = process.argv;
if (ignoreTerm === "ignore-term") process.on("SIGTERM", () => {});
setInterval(() => {}, 1000);
if (serviceUrl === "-") process.stdout.write("ready\\n");
else
  http
    .get(serviceUrl, (answer) => answer.resume())
    .on("socket", (socket) => socket.on("connect", () => process.stdout.write("ready\\n")));
`,
);
// Stands in for the provider plugin, as its launcher `pulumi-resource-dmarc` leaves it: node running the package's
// script, named from the launcher's folder (the package's bin/, or the plugin archive's root).
const packageFolder = join(folder, "node_modules", "pulumi-dmarc-partner");
mkdirSync(join(packageFolder, "dist", "plugin"), { recursive: true });
mkdirSync(join(packageFolder, "bin"));
copyFileSync(providerScript, join(packageFolder, "dist", "plugin", "main.js"));
// Joined by hand: path.join would fold the "bin/.." the launcher's command line keeps.
const pluginScripts = [`${packageFolder}/bin/../dist/plugin/main.js`, `${packageFolder}/dist/plugin/main.js`];
// Stands in for the CLI: a process named pulumi whose child is the provider.
const cli = join(folder, "bin", "pulumi");
mkdirSync(join(cli, ".."), { recursive: true });
writeFileSync(cli, `#!/bin/sh\n"${process.execPath}" "${providerScript}" "$@"\nexit $?\n`);
chmodSync(cli, 0o755);

const started: ChildProcess[] = [];
const servers: (Server | NetServer)[] = [];

afterEach(() => {
  for (const child of started.splice(0)) child.kill("SIGKILL");
  for (const left of runProcessesIn(folder)) process.kill(left.pid, "SIGKILL");
});
afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  rmSync(folder, { recursive: true, force: true });
});

async function listening<T extends Server | NetServer>(server: T): Promise<{ server: T; port: number }> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as { port: number }).port };
}

/** An engine address: a loopback listener while `open`, refused once closed. */
async function engine(): Promise<{ address: string; close: () => Promise<void> }> {
  const { server, port } = await listening(createServer((socket) => socket.destroy()));
  return { address: `127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** A service whose answer to each request comes `delayMs` late. */
async function lateService(delayMs: number): Promise<{ url: string; answered: () => number }> {
  let answered = 0;
  const { port } = await listening(
    createHttpServer((_request, response) => {
      setTimeout(() => {
        answered++;
        response.setHeader("connection", "close");
        response.end("ok");
      }, delayMs).unref();
    }),
  );
  return { url: `http://127.0.0.1:${port}/v1/organizations`, answered: () => answered };
}

/** Starts the fake provider in the folder and resolves once it runs, with its stdout lines. */
async function provider(command: string, args: string[]): Promise<{ child: ChildProcess; pid: number }> {
  const child = spawn(command, args, { cwd: folder, stdio: ["ignore", "pipe", "inherit"] });
  started.push(child);
  const lines: string[] = [];
  child.stdout?.on("data", (chunk: Buffer) => lines.push(...chunk.toString().trim().split("\n")));
  for (let attempt = 0; !lines.includes("ready"); attempt++) {
    if (attempt > 400) throw new Error("the fake provider did not start within 20 s");
    await sleep(50);
  }
  return { child, pid: child.pid ?? 0 };
}

const pids = (found: { pid: number }[]) => found.map((entry) => entry.pid);

/** The fake provider started with an engine that then goes away, as a killed run leaves it, and found as an orphan. */
async function orphanedProvider(serviceUrl: string, ...extra: string[]) {
  const engineAt = await engine();
  const started = await provider(process.execPath, [providerScript, engineAt.address, serviceUrl, ...extra]);
  await engineAt.close();
  const { orphans } = await findRunProcesses(folder);
  return { ...started, orphans };
}

describe("engineAddressOf", () => {
  it.each([
    ["/usr/bin/node /p/node_modules/@pulumi/pulumi/cmd/dynamic-provider/index.js 127.0.0.1:40321", "127.0.0.1:40321"],
    ["/home/ci/.pulumi/bin/pulumi-language-nodejs -root=/p 127.0.0.1:36111", "127.0.0.1:36111"],
    ["node /p/cmd/run --monitor 127.0.0.1:1 --engine 127.0.0.1:2 --pwd /p .", "127.0.0.1:2"],
    ["node /p/cmd/run --monitor [::1]:5 --pwd /p .", "[::1]:5"],
    ["node /p/node_modules/@pulumi/pulumi/cmd/dynamic-provider/index.js", undefined],
  ])("%s → %s", (command, address) => {
    expect(engineAddressOf(command)).toBe(address);
  });
});

describe("inFlightBoundMs", () => {
  const boundOf = (config: Record<string, string>, env: NodeJS.ProcessEnv) =>
    inFlightBoundMs(settingsFrom((key) => config[key], env));

  it("adds the connect and request timeouts to the retry budget, from the stack's config before the environment", () => {
    expect(boundOf({}, {})).toBe(10_000 + 30_000 + 120_000);
    expect(
      boundOf(
        { "dmarc:requestTimeoutMs": "2000", "dmarc:maxRetryElapsedMs": "0" },
        {
          DMARC_REQUEST_TIMEOUT_MS: "9000",
          DMARC_CONNECT_TIMEOUT_MS: "500",
        },
      ),
    ).toBe(500 + 2_000);
  });
});

describe("the processes of a run in a project folder", () => {
  it("are live while their engine answers, orphans once it is gone", async () => {
    const engineAt = await engine();
    const { pid } = await provider(process.execPath, [providerScript, engineAt.address, "-"]);
    expect(runProcessesIn(folder)).toEqual([
      expect.objectContaining({ pid, role: "provider", engineAddress: engineAt.address, underLiveCli: false }),
    ]);
    expect(pids((await findRunProcesses(folder)).live)).toEqual([pid]);

    await engineAt.close();
    const found = await findRunProcesses(folder);
    expect({ live: pids(found.live), orphans: pids(found.orphans) }).toEqual({ live: [], orphans: [pid] });
    expect(await findRunProcesses(join(folder, "bin"))).toEqual({ live: [], orphans: [] });
  });

  it.each(pluginScripts)(
    "count the provider plugin's process among them, an orphan once its engine is gone: %s",
    async (script) => {
      const engineAt = await engine();
      const { pid } = await provider(process.execPath, [script, engineAt.address, "-"]);
      expect(runProcessesIn(folder)).toEqual([
        expect.objectContaining({ pid, role: "provider", engineAddress: engineAt.address, underLiveCli: false }),
      ]);
      await engineAt.close();
      expect(pids((await findRunProcesses(folder)).orphans)).toEqual([pid]);
    },
  );

  it("are never orphans under a live pulumi process, even with their engine gone", async () => {
    const engineAt = await engine();
    await engineAt.close();
    const { child } = await provider(cli, [engineAt.address, "-"]);
    const found = await findRunProcesses(folder);
    expect(found.orphans).toEqual([]);
    expect(found.live).toEqual([expect.objectContaining({ role: "provider", underLiveCli: true })]);
    expect(found.live[0]?.pid).not.toBe(child.pid);
  });
});

describe("settleOrphans", () => {
  it("waits for the call an orphan has in flight, then stops it with SIGTERM", async () => {
    // Answers late enough that the wait shows even when finding the orphan is slow on a busy machine.
    const service = await lateService(3_000);
    const started = await orphanedProvider(service.url);
    const exited = new Promise((resolve) => started.child.on("exit", (_code, signal) => resolve(signal)));

    const [stopped] = await settleOrphans(started.orphans, { boundMs: 30_000 });
    expect(service.answered()).toBe(1);
    expect(stopped).toMatchObject({ pid: started.pid, stoppedBy: "SIGTERM" });
    expect(stopped?.waitedMs).toBeGreaterThanOrEqual(1_000);
    expect(stopped?.waitedMs).toBeLessThan(30_000);
    expect(await exited).toBe("SIGTERM");
  });

  it("stops an orphan with nothing in flight at once, and with SIGKILL when SIGTERM does not end it", async () => {
    const started = await orphanedProvider("-", "ignore-term");
    const [stopped] = await settleOrphans(started.orphans, { boundMs: 30_000, graceMs: 500 });
    expect(stopped).toMatchObject({ pid: started.pid, stoppedBy: "SIGKILL" });
    expect(stopped?.waitedMs).toBeLessThan(5_000);
  });

  it("gives up waiting at the bound: a call that outlasts it is cut", async () => {
    const service = await lateService(60_000);
    const started = await orphanedProvider(service.url);
    const [stopped] = await settleOrphans(started.orphans, { boundMs: 1_000 });
    expect(stopped).toMatchObject({ pid: started.pid, stoppedBy: "SIGTERM" });
    expect(stopped?.waitedMs).toBeGreaterThanOrEqual(1_000);
    expect(stopped?.waitedMs).toBeLessThan(10_000);
    expect(service.answered()).toBe(0);
  });
});
