import { join } from "node:path";
import { type StartedProcess, startProcess } from "../../scripts/build/process.mjs";

// A process that stands for a provider: it reads its settings as the
// provider does (here from the environment) and sends catalogue reads, so a
// test sees how processes that share a partner's budget pace together.

const CONFIG_MODULE = join(__dirname, "..", "..", "provider", "dist", "runtime", "config.js");

export interface ProviderProcess {
  child: StartedProcess["child"];
  /** Its standard output and error so far. */
  output: () => string;
}

/** Sends `calls` catalogue reads at once (after "go" on its standard input with `waitForGo`); exits 0 when all succeeded. */
export function providerProcess(
  calls: number,
  env: Record<string, string>,
  { waitForGo = false } = {},
): ProviderProcess {
  const script = `
    const { clientFrom, settingsFrom } = require(${JSON.stringify(CONFIG_MODULE)});
    const go = ${waitForGo} ? new Promise((resolve) => process.stdin.once("data", resolve)) : Promise.resolve();
    go.then(() => {
      const client = clientFrom(settingsFrom(() => undefined));
      return Promise.all(Array.from({ length: ${calls} }, () => client.listPlans()));
    }).then(
      () => process.stdout.write("done\\n"),
      (error) => { process.stderr.write(String(error) + "\\n"); process.exit(1); },
    );`;
  const { child, said } = startProcess(process.execPath, ["-e", script], {
    env: { PATH: process.env.PATH ?? "", ...env },
    ownEnv: true,
    stdin: waitForGo ? "pipe" : "ignore",
  });
  return { child, output: said };
}

export function exited(child: StartedProcess["child"]): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

/** Polls `condition` (after `refresh`) every 10 ms until it holds, failing after `timeoutMs`. */
export async function until(
  condition: () => boolean,
  what: string,
  timeoutMs = 60_000,
  refresh: () => Promise<void> = async () => {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (await refresh(); !condition(); await refresh()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
