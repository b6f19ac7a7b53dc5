import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { uniqueStackName, useEngine } from "../support/engine";
import { declaredInventory, fleetProgramSource, inventory } from "./fleet";
import {
  dmarcRecover,
  emulatorPerCase,
  emulatorState,
  eventually,
  isPlugin,
  isRunning,
  kill,
  processesIn,
  programFolder,
  pulumiOk,
  report,
  stats,
} from "./harness";

// The other side of stopping a killed run's processes: a run that is alive
// is never touched. dmarc-recover started in the middle of a real `up`
// refuses, names the live run, stops nothing, and the run completes.

const TENANTS = 4;
// Long enough that the run is still waiting on these calls when the command's refusal is checked,
// even on a busy machine where the command's own CLI calls take seconds.
const HOLD_MS = 30_000;
const source = fleetProgramSource(TENANTS);

const startEmulator = emulatorPerCase();

describe("dmarc-recover during a live pulumi up", () => {
  it("refuses, stops nothing, and the run completes", async () => {
    const handle = await startEmulator();
    const env = { ...(await useEngine()), ...handle.env };
    const folder = programFolder(`reliability-live-${process.pid}`, source);
    const stack = uniqueStackName("live");
    await pulumiOk(["stack", "init", stack], folder, env);
    let runPid = 0;
    try {
      await handle.control("POST", "/faults", { route: "POST /v1/organizations", latencyMs: HOLD_MS });
      const run = spawn("pulumi", ["up", "--yes", "--skip-preview", "--non-interactive", "--stack", stack], {
        cwd: folder,
        env: { ...process.env, ...env },
        stdio: "ignore",
        detached: true,
      });
      runPid = run.pid ?? 0;
      const exited = new Promise<number | null>((resolve) => run.on("close", resolve));
      await eventually(
        "organisation creates in flight",
        () => stats(handle),
        (counted) => (counted.byRoute["POST /v1/organizations"] ?? 0) >= 2,
        1_200,
      );
      const plugins = processesIn(folder).filter(isPlugin);
      expect(plugins.length).toBeGreaterThan(0);

      const refused = await dmarcRecover(["--stack", stack], folder, env);
      expect(refused.code, refused.stdout + refused.stderr).toBe(3);
      expect(refused.stderr).toMatch(/^refused: stack \S+ is locked by .*a pulumi process that is still running/m);
      expect(refused.stdout).not.toMatch(/^stopped /m);
      expect(isRunning(runPid)).toBe(true);
      expect(plugins.filter(isRunning)).toEqual(plugins);

      await handle.control("DELETE", "/faults");
      expect(await exited).toBe(0);
      const priceId = `price_${handle.partner.id}_starter_monthly`;
      expect(inventory(await emulatorState(handle), handle.partner.id)).toEqual(declaredInventory(TENANTS, priceId));
      await pulumiOk(["preview", "--expect-no-changes", "--stack", stack], folder, env);
      report("live run", "dmarc-recover during pulumi up", { tenants: TENANTS, livePlugins: plugins.length });
      await pulumiOk(["destroy", "--yes", "--skip-preview", "--stack", stack], folder, env);
    } finally {
      if (runPid && isRunning(runPid)) kill(runPid);
      for (const left of processesIn(folder)) kill(left);
      await pulumiOk(["stack", "rm", "--yes", "--force", "--stack", stack], folder, env).catch(() => undefined);
    }
  }, 600_000);
});
