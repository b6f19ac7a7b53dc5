import { join } from "node:path";
import type { RequestWindow, StatsView } from "dmarc-partner-emulator";
import type { EmulatorReady } from "./emulatorProcess";
import type { RateLimitHints } from "./options";
import { startProcess } from "./processes";

/** `GET /_emulator/stats`: API requests counted since the emulator started (the control plane is not counted). */
export type EmulatorStats = StatsView;

export interface BenchEmulator {
  url: string;
  partner: EmulatorReady["partner"];
  /** Process id of the emulator, so the sampler can tell it from the engine's processes. */
  pid: number;
  stats(): Promise<EmulatorStats>;
  /** Starts timing the API requests from now on. */
  openWindow(): Promise<RequestWindow>;
  /**
   * Replaces every fault with one that adds `latencyMs` to each API request and, optionally, a rate
   * limit of `rateLimit` requests per `perSeconds` (default 1), its window starting empty.
   */
  shapeTraffic(
    latencyMs: number,
    rateLimit: number | undefined,
    hints: RateLimitHints,
    perSeconds?: number,
  ): Promise<void>;
  close(): Promise<void>;
}

const START_TIMEOUT_MS = 30_000;
const CLOSE_TIMEOUT_MS = 10_000;

/** Starts the emulator in a child process on a random loopback port. */
export async function launchEmulator(): Promise<BenchEmulator> {
  const { child } = startProcess(process.execPath, [join(__dirname, "emulatorProcess.js")], {
    output: "inherit",
    ipc: true,
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const ready = await new Promise<EmulatorReady>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the emulator did not start within ${START_TIMEOUT_MS} ms`)),
      START_TIMEOUT_MS,
    );
    child.once("message", (message) => {
      clearTimeout(timer);
      resolve(message as EmulatorReady);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the emulator exited before it was ready (exit ${code})`));
    });
  }).catch((error: unknown) => {
    child.kill();
    throw error;
  });

  const control = async (method: string, path: string, body?: unknown): Promise<string> => {
    const response = await fetch(`${ready.url}/_emulator${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`emulator control ${method} ${path}: ${response.status} ${text}`);
    return text;
  };

  return {
    url: ready.url,
    partner: ready.partner,
    pid: child.pid ?? 0,
    stats: async () => JSON.parse(await control("GET", "/stats")) as EmulatorStats,
    openWindow: async () => JSON.parse(await control("POST", "/stats/window")) as RequestWindow,
    async shapeTraffic(latencyMs, rateLimit, hints, perSeconds = 1) {
      await control("DELETE", "/faults");
      if (latencyMs === 0 && rateLimit === undefined) return;
      await control("POST", "/faults", {
        route: "*",
        latencyMs,
        ...(rateLimit === undefined ? {} : { rateLimit: { requests: rateLimit, perSeconds, hints } }),
      });
    },
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.send("close");
      let timer: NodeJS.Timeout | undefined;
      const gaveUp = await Promise.race([
        exited.then(() => false),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(true), CLOSE_TIMEOUT_MS);
        }),
      ]);
      clearTimeout(timer);
      if (gaveUp) child.kill("SIGKILL");
    },
  };
}
