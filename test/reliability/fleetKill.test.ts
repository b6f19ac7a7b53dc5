import type { ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { projectRoot } from "../../scripts/project.mjs";
import { fleetProjectFolder } from "../fleet/support";
import { uniqueStackName, useEngine } from "../support/engine";
import { declaredInventory, inventory, tenants } from "./fleet";
import {
  CREATE_REQUESTS_PER_TENANT,
  creates,
  DOMAIN_CREATE_ROUTES,
  descendants,
  domainCreates,
  emulatorPerCase,
  emulatorState,
  eventually,
  FULL,
  isPlugin,
  isRunning,
  kill,
  processesUnder,
  pulumiCli,
  report,
  routeCount,
  type Stats,
  startCommand,
  stats,
} from "./harness";

// A fleet `up` killed the ways a runner dies (the runner's process group, as
// a cancelled CI job; the runner alone; its `pulumi` processes alone), then
// one plain `dmarc-fleet up`, as a pipeline reruns it: the fleet ends with
// exactly the declared objects, nothing is left running, a preview shows
// no change, and a further plain `up` runs nothing. A change killed mid-run
// and then reverted leaves the shards it started due all the same. The
// plugins of the killed engines live on in process groups of their own;
// the rerun's recovery waits for their calls and stops them.

const TENANTS = FULL ? 12 : 6;
const SHARD_SIZE = 3;
// Calls on the held routes wait this long in the emulator, so the kill finds them in flight.
const HOLD_MS = 3_000;
const DECLARED_CREATES = TENANTS * CREATE_REQUESTS_PER_TENANT;

type Victim = "process group" | "runner alone" | "pulumi alone";

interface KillCase {
  moment: string;
  victim: Victim;
  hold?: string[];
  when: (counted: Stats) => boolean;
  representative?: boolean;
  /**
   * The fleet is deployed first; the killed `up` adds a webhook to every
   * tenant, and the inventory goes back before the rerun, as a pipeline
   * reverting the change would: the shards the killed run started must
   * still be due, whatever their pending operations.
   */
  reverted?: true;
}

const CASES: KillCase[] = [
  {
    moment: "organisation creates in flight",
    victim: "process group",
    hold: ["POST /v1/organizations"],
    when: (c) => routeCount(c, "POST /v1/organizations") >= 3,
    representative: true,
  },
  {
    moment: "domain and webhook creates in flight",
    victim: "pulumi alone",
    hold: [...DOMAIN_CREATE_ROUTES, "POST /v1/webhooks"],
    when: (c) => domainCreates(c) >= 2 && routeCount(c, "POST /v1/webhooks") >= 1,
  },
  { moment: "the middle of the creates", victim: "runner alone", when: (c) => creates(c) >= DECLARED_CREATES / 2 },
  {
    moment: "near the end of the creates",
    victim: "process group",
    when: (c) => creates(c) >= DECLARED_CREATES - 10,
  },
  {
    moment: "a change's webhook creates in flight, the change then reverted",
    victim: "process group",
    hold: ["POST /v1/webhooks"],
    when: (c) => routeCount(c, "POST /v1/webhooks") > TENANTS,
    reverted: true,
  },
];

/** The inventory declaring what the reliability fleet program declares, tenant for tenant; `changed`: a second webhook each. */
function tenantsYaml(changed = false): string {
  return stringify({
    tenants: tenants(TENANTS).map((tenant) => ({
      key: `t${tenant.index}`,
      name: tenant.organization,
      group: "main",
      plan: "Starter",
      domains: tenant.domains,
      webhooks: [
        { name: `t${tenant.index} events`, url: tenant.webhookUrl, events: ["domain.created", "domain.verified"] },
        ...(changed ? [{ name: `t${tenant.index} audit`, url: tenant.webhookUrl, events: ["domain.created"] }] : []),
      ],
      admins: [tenant.admin],
    })),
  });
}

interface Overview {
  name: string;
  upToDate: boolean;
  due?: string;
  lastUp?: { outcome: string };
}

/** A partner's project folder: Pulumi.yaml, tenants.yaml, the package installed. */
function fleetProject(name: string): string {
  const folder = fleetProjectFolder(name);
  writeFileSync(join(folder, "Pulumi.yaml"), `name: ${name}\nruntime: nodejs\n`);
  writeFileSync(join(folder, "tenants.yaml"), tenantsYaml());
  return folder;
}

/** `dmarc-fleet` as `npx dmarc-fleet` runs it, in its own process group as a CI job's shell is. */
function startFleet(args: string[], cwd: string, env: Record<string, string>) {
  return startCommand(process.execPath, [join(projectRoot, "provider", "bin", "dmarc-fleet.js"), ...args], cwd, env, {
    detached: true,
  });
}

function killVictim(victim: Victim, runner: ChildProcess): void {
  const pid = runner.pid ?? 0;
  if (victim === "process group") process.kill(-pid, "SIGKILL");
  else if (victim === "runner alone") kill(pid);
  else for (const engine of pulumiCli(descendants(pid))) kill(engine);
}

const startEmulator = emulatorPerCase();

for (const killCase of CASES.filter((candidate) => FULL || candidate.representative)) {
  describe(`dmarc-fleet up killed (${killCase.victim}) at ${killCase.moment}`, () => {
    it("heals with one plain dmarc-fleet up: exactly the declared objects, nothing left running", async () => {
      const handle = await startEmulator();
      const env = { ...(await useEngine()), ...handle.env };
      const folder = fleetProject(`reliability-fleet-kill-${process.pid}`);
      const fleet = uniqueStackName("killed");
      const args = ["--fleet", fleet, "--shard-size", String(SHARD_SIZE), "--concurrency", "2"];
      const fleetOk = async (command: string, ...extra: string[]) => {
        const result = await startFleet([command, ...args, ...extra], folder, env).done;
        expect(result.code, `dmarc-fleet ${command}:\n${result.stdout}\n${result.stderr}`).toBe(0);
        return result;
      };
      const started: number[] = [];
      try {
        if (killCase.reverted) {
          await fleetOk("up");
          writeFileSync(join(folder, "tenants.yaml"), tenantsYaml(true));
        }
        for (const route of killCase.hold ?? []) await handle.control("POST", "/faults", { route, latencyMs: HOLD_MS });
        const killed = startFleet(["up", ...args], folder, env);
        started.push(killed.child.pid ?? 0);
        await eventually(killCase.moment, () => stats(handle), killCase.when, 1_200);
        started.push(...descendants(killed.child.pid ?? 0));
        killVictim(killCase.victim, killed.child);
        const first = await killed.done;
        const orphans = processesUnder(folder).filter(isPlugin);
        // A runner killed alone leaves its engines without a reader: each dies at its next line of output, or
        // finishes. The rerun would refuse a live one, rightly; a pipeline's rerun comes later than this.
        await eventually(
          "the killed runner's engines to end",
          async () => pulumiCli(started.flatMap((pid) => [pid, ...descendants(pid)])).filter(isRunning),
          (left) => left.length === 0,
          1_200,
        );
        await handle.control("DELETE", "/faults");

        // Every shard the killed run started is due: it was marked failed before its engine started.
        const { shards } = JSON.parse((await fleetOk("status", "--json")).stdout) as { shards: Overview[] };
        if (killCase.reverted) {
          writeFileSync(join(folder, "tenants.yaml"), tenantsYaml());
          expect(shards.filter((shard) => shard.lastUp?.outcome === "failed").length).toBeGreaterThan(0);
          for (const shard of shards.filter((candidate) => candidate.lastUp?.outcome === "failed"))
            expect(shard.due).toMatch(/its last up failed at /);
        } else {
          // A shard whose up returned before the kill, or after it while the runner lived on (pulumi killed
          // alone), is rightly up to date, with its done mark; the kill left the others due. Were one wrongly
          // up to date, the rerun below would skip it and the service would not hold what is declared.
          expect(shards.filter((shard) => !shard.upToDate).length).toBeGreaterThan(0);
          for (const shard of shards.filter((candidate) => candidate.upToDate))
            expect(shard.lastUp?.outcome).toBe("done");
        }

        const rerun = await fleetOk("up");
        expect(processesUnder(folder).filter(isRunning)).toEqual([]);
        const priceId = `price_${handle.partner.id}_starter_monthly`;
        expect(inventory(await emulatorState(handle), handle.partner.id)).toEqual(declaredInventory(TENANTS, priceId));
        const preview = await startFleet(["preview", ...args, "--detailed-exitcode"], folder, env).done;
        expect(preview.code, `dmarc-fleet preview:\n${preview.stdout}\n${preview.stderr}`).toBe(0);
        // Converged: a further plain up runs nothing.
        const quiet = JSON.parse((await fleetOk("up", "--json")).stdout) as { results: { reason?: string }[] };
        expect(quiet.results.map((result) => result.reason)).toEqual(
          quiet.results.map(() => "unchanged since its last up"),
        );

        report("fleet kill", `${killCase.moment}, killing ${killCase.victim}`, {
          tenants: TENANTS,
          shards: Math.ceil(TENANTS / SHARD_SIZE),
          firstRunExit: first.code,
          orphansLeftByKill: orphans.length,
          recoveries: (rerun.stdout + rerun.stderr).match(/ was recovered first: /g)?.length ?? 0,
          orphansStoppedByRerun: [...(rerun.stdout + rerun.stderr).matchAll(/stopped (\d+) process/g)].reduce(
            (sum, match) => sum + Number(match[1]),
            0,
          ),
        });

        await fleetOk("destroy");
        expect(inventory(await emulatorState(handle), handle.partner.id)).toEqual([]);
      } finally {
        for (const left of [...started, ...processesUnder(folder)].filter(isRunning)) kill(left);
      }
    }, 900_000);
  });
}
