import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { uniqueStackName, useEngine } from "../support/engine";
import { fleetProgramSource, stateIds } from "./fleet";
import {
  dmarcRecover,
  emulatorPerCase,
  emulatorState,
  eventually,
  FULL,
  inFlight,
  isRunning,
  kill,
  processesIn,
  programFolder,
  pulumi,
  pulumiOk,
  report,
  stats,
} from "./harness";

// What the README's table says of a plain rerun: `pulumi cancel` and `pulumi
// up` after a kill make the killed run's organisations a second time, and
// `dmarc-recover` run afterwards names each duplicate (exit code 4) without
// deleting anything.

const TENANTS = 4;
const HOLD_MS = 3_000;
const source = fleetProgramSource(TENANTS);

const startEmulator = emulatorPerCase();

describe.runIf(FULL)("a plain rerun after a kill", () => {
  it("duplicates organisations, which dmarc-recover then names", async () => {
    const handle = await startEmulator();
    const env = { ...(await useEngine()), ...handle.env };
    const folder = programFolder("reliability-rerun", source);
    const stack = uniqueStackName("rerun");
    const cli = (...args: string[]) => pulumiOk([...args, "--stack", stack], folder, env);
    await pulumiOk(["stack", "init", stack], folder, env);
    try {
      await handle.control("POST", "/faults", { route: "POST /v1/organizations", latencyMs: HOLD_MS });
      const run = spawn("pulumi", ["up", "--yes", "--skip-preview", "--non-interactive", "--stack", stack], {
        cwd: folder,
        env: { ...process.env, ...env },
        stdio: "ignore",
      });
      const exited = new Promise((resolve) => run.on("close", resolve));
      await eventually(
        "organisation creates in flight",
        () => stats(handle),
        (c) => (c.byRoute["POST /v1/organizations"] ?? 0) >= TENANTS,
      );
      kill(run.pid ?? 0);
      await exited;
      await eventually(
        "the orphaned plugins' calls to finish",
        () => stats(handle),
        (c) => inFlight(c) === 0,
      );
      for (const orphan of processesIn(folder)) kill(orphan);
      await handle.control("DELETE", "/faults");

      // What the lock error suggests.
      await cli("cancel", "--yes");
      await cli("up", "--yes", "--skip-preview");
      const organizations = (await emulatorState(handle)).organizations.filter(
        (organization) => organization.partnerId === handle.partner.id,
      );
      const recorded = stateIds(JSON.parse((await cli("stack", "export")).stdout));
      const duplicates = organizations.filter((organization) => !recorded.includes(`Organization ${organization.id}`));
      expect(duplicates.length).toBeGreaterThan(0);

      const state = (await cli("stack", "export")).stdout;
      const recovered = await dmarcRecover(["--stack", stack], folder, env);
      expect(recovered.code, recovered.stdout + recovered.stderr).toBe(4);
      const named = [...recovered.stderr.matchAll(/^check\s+\S+ \(Organization (\S+)\)/gm)].map((match) => match[1]);
      expect(named.sort()).toEqual(duplicates.map((organization) => organization.id).sort());
      // Nothing deleted on the service; the state only lost the pending operations.
      expect((await emulatorState(handle)).organizations.length).toBe(organizations.length);
      const after = JSON.parse((await cli("stack", "export")).stdout);
      expect(after.deployment.pending_operations ?? []).toEqual([]);
      expect(stateIds(after)).toEqual(stateIds(JSON.parse(state)));
      report("crash", "plain rerun after a kill", {
        tenants: TENANTS,
        duplicateOrganizations: duplicates.length,
        namedByDmarcRecover: named.length,
      });
    } finally {
      for (const survivor of processesIn(folder).filter(isRunning)) kill(survivor);
      await pulumi(["stack", "rm", "--yes", "--force", "--stack", stack], folder, env);
    }
  }, 300_000);
});
