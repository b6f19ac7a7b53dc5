import { spawn } from "node:child_process";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { closeClients, createClient } from "pulumi-dmarc-partner/client";
import { afterAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { uniqueStackName, useEngine } from "../support/engine";
import { declaredInventory, inventory, serviceIds, stateIds } from "./fleet";
import {
  descendants,
  emulatorState,
  eventually,
  FULL,
  inFlight,
  isRunning,
  kill,
  programFolder,
  pulumi,
  pulumiOk,
  report,
  stats,
} from "./harness";
import { type Deployment, settlePendingCreates } from "./recovery";

// SIGKILL in the middle of `pulumi up`, then the recovery README.md
// documents: remove the lock, settle each pending create against the
// service, refresh, `up` again. Afterwards the service holds exactly the
// declared objects, each recorded once in the state.

const TENANTS = 4;
// Creates of domains and webhooks are held this long by the emulator, so the kill finds them in flight.
const HOLD_MS = 3_000;

// The same fleet the fault matrix declares, as a program folder partners run `pulumi up` on.
const source = `import { fleetProgram } from "../../../test/reliability/fleet";

export = fleetProgram(${TENANTS});
`;

interface Variant {
  name: string;
  /**
   * Kill every process the CLI started along with it, as a torn-down runner
   * does. The plugins run in process groups of their own, so killing the
   * CLI's group would not reach them.
   */
  everything: boolean;
  representative?: boolean;
}

const variants: Variant[] = [
  { name: "the pulumi process alone (its plugins finish what they started)", everything: false, representative: true },
  { name: "pulumi and every process it started (the runner torn down)", everything: true },
];

const handles: EmulatorHandle[] = [];
afterAll(async () => {
  await closeClients();
  await Promise.all(handles.map((handle) => handle.emulator.close()));
});

describe.each(variants.filter((variant) => FULL || variant.representative))("SIGKILL of $name", (variant) => {
  it("recovers to exactly the declared objects", async () => {
    const handle = await startTestEmulator();
    handles.push(handle);
    const partnerId = handle.partner.id;
    const env = { ...(await useEngine()), ...handle.env };
    const folder = programFolder("reliability-crash", source);
    const stack = uniqueStackName("crash");
    const cli = (...args: string[]) => pulumiOk([...args, "--stack", stack], folder, env);
    await pulumiOk(["stack", "init", stack], folder, env);
    // Everything this test started, to be sure none outlives it whatever happens.
    const started: number[] = [];
    let leftovers = 0;

    try {
      for (const route of ["POST /v1/domains", "POST /v1/webhooks"]) {
        await handle.control("POST", "/faults", { route, latencyMs: HOLD_MS });
      }
      const up = spawn("pulumi", ["up", "--yes", "--skip-preview", "--non-interactive", "--stack", stack], {
        cwd: folder,
        env: { ...process.env, ...env },
        stdio: "ignore",
      });
      const exited = new Promise((resolve) => up.on("close", resolve));
      const pid = up.pid;
      if (pid === undefined) throw new Error("pulumi up did not start");
      started.push(pid);
      await eventually(
        "domain and webhook creates in flight",
        () => stats(handle),
        (counted) =>
          (counted.byRoute["POST /v1/domains"] ?? 0) >= 2 && (counted.byRoute["POST /v1/webhooks"] ?? 0) >= 2,
      );
      const children = descendants(pid);
      started.push(...children);
      for (const victim of variant.everything ? [pid, ...children] : [pid]) kill(victim);
      await exited;

      if (variant.everything) {
        // Creates still held by the emulator either land or are dropped within the hold.
        await sleep(HOLD_MS + 1_000);
      } else {
        // The orphaned provider finishes the creates it had sent.
        await eventually(
          "the orphaned provider's creates to finish",
          () => stats(handle),
          (c) => inFlight(c) === 0,
        );
      }
      const orphans = children.filter(isRunning);
      leftovers = orphans.length;
      for (const orphan of orphans) kill(orphan);
      await handle.control("DELETE", "/faults");

      // A kill in the middle of a checkpoint write leaves it cut off; the file
      // backend keeps the previous one beside it, which is restored.
      const checkpoint = join(
        fileURLToPath(env.PULUMI_BACKEND_URL ?? ""),
        ".pulumi",
        "stacks",
        "reliability-crash",
        `${stack}.json`,
      );
      const locked = await pulumi(["up", "--yes", "--skip-preview", "--stack", stack], folder, env);
      expect(locked.code).not.toBe(0);
      if ((locked.stderr + locked.stdout).includes("failed to load checkpoint")) {
        copyFileSync(`${checkpoint}.bak`, checkpoint);
      } else {
        // Otherwise the killed run left its lock: nothing runs until it is removed.
        expect(locked.stderr + locked.stdout).toContain("currently locked");
      }
      await cli("cancel", "--yes");

      const stateFile = join(folder, `${stack}.state.json`);
      await cli("stack", "export", "--file", stateFile);
      const exported = JSON.parse(readFileSync(stateFile, "utf8")) as Deployment;
      const pending = (exported.deployment.pending_operations ?? []).filter((op) => op.type === "creating");
      expect(pending.length).toBeGreaterThan(0);

      const client = createClient({
        baseUrl: handle.emulator.url,
        clientId: handle.partner.clientId,
        clientSecret: handle.partner.clientSecret,
      });
      const settled = await settlePendingCreates(exported, client);
      writeFileSync(stateFile, JSON.stringify(settled.deployment));
      await cli("stack", "import", "--file", stateFile);
      await cli("refresh", "--yes", "--skip-preview");
      await cli("up", "--yes", "--skip-preview");

      const snapshot = await emulatorState(handle);
      const priceId = `price_${partnerId}_starter_monthly`;
      expect(inventory(snapshot, partnerId)).toEqual(declaredInventory(TENANTS, priceId));
      await cli("stack", "export", "--file", stateFile);
      const recovered = JSON.parse(readFileSync(stateFile, "utf8")) as Deployment;
      expect(recovered.deployment.pending_operations ?? []).toEqual([]);
      expect(stateIds(recovered)).toEqual(serviceIds(snapshot, partnerId));
      // Every webhook's state holds the signing secret the service uses: none was adopted without one.
      const withSecrets = JSON.parse((await cli("stack", "export", "--show-secrets")).stdout) as Deployment;
      const secrets = (withSecrets.deployment.resources ?? [])
        .filter((resource) => resource.type.endsWith(":Webhook"))
        // Revealed secrets are exported as { plaintext: <the value as JSON> }.
        .map(
          (hook) => `${hook.id} ${JSON.parse((hook.outputs?.secret as { plaintext?: string })?.plaintext ?? "null")}`,
        )
        .sort();
      expect(secrets).toEqual(snapshot.webhooks.map((hook) => `${hook.objectId} ${hook.secret}`).sort());

      await cli("destroy", "--yes", "--skip-preview");
      expect(inventory(await emulatorState(handle), partnerId)).toEqual([]);
      report("crash", variant.name, {
        tenants: TENANTS,
        pendingCreates: pending.length,
        adopted: settled.adopted.length,
        cleared: settled.cleared.length,
        webhooksRecreated: settled.deletedWebhooks.length,
        processesLeftRunning: leftovers,
      });
    } finally {
      for (const survivor of started.flatMap((pid) => [pid, ...descendants(pid)]).filter(isRunning)) kill(survivor);
      await pulumi(["stack", "rm", "--yes", "--force", "--stack", stack], folder, env);
    }
  }, 300_000);
});
