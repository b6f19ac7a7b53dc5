import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, type FSWatcher, readdirSync, readFileSync, truncateSync, watch } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describeInterruption } from "pulumi-dmarc-partner/recovery";
import { describe, expect, it } from "vitest";
import type { EmulatorHandle } from "../support/emulator";
import { uniqueStackName, useEngine } from "../support/engine";
import { declaredInventory, fleetProgramSource, inventory, serviceIds, stateIds } from "./fleet";
import {
  type CliResult,
  CREATE_REQUESTS_PER_TENANT,
  creates,
  DOMAIN_CREATE_ROUTES,
  descendants,
  dmarcRecover,
  domainCreates,
  emulatorPerCase,
  emulatorState,
  eventually,
  FULL,
  inFlight,
  isLanguageHostOrProgram,
  isPlugin,
  isRunning,
  kill,
  processesIn,
  programFolder,
  pulumi,
  pulumiOk,
  report,
  routeCount,
  type Stats,
  stats,
} from "./harness";

// SIGKILL at one moment of a 20-tenant `pulumi up` (or of the destroy after
// it), then what the README tells an operator: `dmarc-recover`, then a plain
// `pulumi up`. Afterwards the service holds exactly the declared objects, each
// recorded once, every webhook secret in the state is the one the service
// signs with, and a preview shows no change.

// The full matrix kills a 20-tenant fleet (140 resources); `npm test` a smaller one, the same way.
const TENANTS = FULL ? 20 : 6;
// Calls on the held routes wait this long in the emulator, so the kill finds them in flight.
const HOLD_MS = 3_000;
const DECLARED_CREATES = TENANTS * CREATE_REQUESTS_PER_TENANT;

const source = fleetProgramSource(TENANTS);

const deletes = (counted: Stats) =>
  Object.entries(counted.byRoute).reduce((sum, [route, n]) => sum + (route.startsWith("DELETE ") ? n : 0), 0);
/** Requests that change something on the service; getting a token changes nothing. */
const writes = (counted: Stats) =>
  Object.entries(counted.byRoute)
    .filter(([route]) => !route.startsWith("GET ") && route !== "POST /auth/token")
    .reduce((sum, [, n]) => sum + n, 0);

interface Moment {
  name: string;
  /** `destroy`: a complete `up` first, then the kill lands in the `destroy` that follows. */
  phase: "up" | "destroy";
  /** Routes the emulator holds, so the kill finds their calls in flight. */
  hold?: string[];
  /** The kill comes once the service's counters show this. */
  when: (counted: Stats) => boolean;
  /**
   * Then, at the next checkpoint write: when its temporary file appears
   * beside the checkpoint, or when its attributes file (`<stack>.json.attrs`,
   * written in place just before the rename) changes.
   */
  atCheckpointWrite?: "temporary file" | "attributes";
  /** After the kill, cut the checkpoint short, as a store without atomic writes is left. */
  cutCheckpoint?: boolean;
  /**
   * After the kill, empty the checkpoint's attributes file, as a kill between
   * its truncation and its write leaves it (seen after kills late in destroy).
   */
  cutAttributes?: boolean;
  representative?: boolean;
}

const moments: Moment[] = [
  { name: "right after start", phase: "up", when: (c) => c.requests >= 1 },
  {
    name: "first organisation creates in flight",
    phase: "up",
    hold: ["POST /v1/organizations"],
    when: (c) => routeCount(c, "POST /v1/organizations") >= 3,
  },
  {
    name: "first domain and webhook creates in flight",
    phase: "up",
    hold: [...DOMAIN_CREATE_ROUTES, "POST /v1/webhooks"],
    when: (c) => domainCreates(c) >= 2 && routeCount(c, "POST /v1/webhooks") >= 2,
    representative: true,
  },
  {
    name: "subscriptions and invitations in flight",
    phase: "up",
    hold: ["POST /v1/partners/subscriptions/assign", "POST /v1/users/invite"],
    when: (c) =>
      routeCount(c, "POST /v1/partners/subscriptions/assign") >= 2 && routeCount(c, "POST /v1/users/invite") >= 2,
  },
  { name: "the middle of the creates", phase: "up", when: (c) => creates(c) >= DECLARED_CREATES / 2 },
  { name: "near the end of the creates", phase: "up", when: (c) => creates(c) >= DECLARED_CREATES - 15 },
  {
    name: "during a checkpoint write",
    phase: "up",
    when: (c) => routeCount(c, "POST /v1/organizations") >= 5,
    atCheckpointWrite: "temporary file",
  },
  {
    name: "during a checkpoint's attributes write",
    phase: "up",
    when: (c) => creates(c) >= 50,
    atCheckpointWrite: "attributes",
    cutAttributes: true,
  },
  {
    name: "during a checkpoint write, left cut short",
    phase: "up",
    when: (c) => creates(c) >= 30,
    atCheckpointWrite: "temporary file",
    cutCheckpoint: true,
  },
  {
    name: "early in destroy",
    phase: "destroy",
    hold: ["DELETE /v1/domains/:domain"],
    when: (c) => routeCount(c, "DELETE /v1/domains/:domain") >= 2,
  },
  {
    name: "late in destroy",
    phase: "destroy",
    when: (c) => routeCount(c, "DELETE /v1/organizations/:organizationId") >= 8,
  },
];

interface Variant {
  name: string;
  /**
   * Kill the CLI's process group, as a cancelled CI job does. The plugins run
   * in groups of their own and live on either way.
   */
  group: boolean;
  representative?: boolean;
}

const variants: Variant[] = [
  { name: "pulumi alone", group: false, representative: true },
  { name: "the whole process group", group: true },
];

const cases = moments.flatMap((moment) =>
  variants
    .filter(() => FULL || moment.representative)
    .filter((variant) => FULL || variant.representative)
    .map((variant) => ({ moment, variant, label: `${moment.name}, killing ${variant.name}` })),
);

const startEmulator = emulatorPerCase();

/** Resolves with the moment the kill lands, polling the service's counters (bounded) and watching checkpoint writes. */
async function killAt(
  moment: Moment,
  handle: EmulatorHandle,
  checkpointFolder: string,
  stack: string,
  victim: ChildProcess,
  group: boolean,
): Promise<number[]> {
  const pid = victim.pid ?? 0;
  await eventually(moment.name, () => stats(handle), moment.when, 1_200);
  if (moment.atCheckpointWrite) {
    let watcher: FSWatcher | undefined;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no checkpoint write within 60 s")), 60_000);
      // The backend writes a temporary file beside the checkpoint, then its attributes, then renames it over.
      const lands = (file: string) =>
        moment.atCheckpointWrite === "attributes"
          ? file === `${stack}.json.attrs`
          : file.startsWith(`${stack}.json.`) && file.endsWith(".tmp") && !file.startsWith(`${stack}.json.bak`);
      watcher = watch(checkpointFolder, (_event, file) => {
        if (file && lands(file)) {
          clearTimeout(timer);
          resolve();
        }
      });
    }).finally(() => watcher?.close());
  }
  const children = descendants(pid);
  if (group) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
    }
  } else kill(pid);
  return children;
}

function lockFiles(backend: string, project: string, stack: string): string[] {
  const folder = join(backend, ".pulumi", "locks", "organization", project, stack);
  return existsSync(folder) ? readdirSync(folder).sort() : [];
}

/** Counts the command's lines by what it did to each resource. */
function settledByKind(output: string): Record<string, number> {
  const counted: Record<string, number> = {};
  for (const match of output.matchAll(/^(adopted|recreated|dropped|refreshed|left)\s+\S+ \((\w+)/gm)) {
    const key = `${match[1]} ${match[2]}`;
    counted[key] = (counted[key] ?? 0) + 1;
  }
  return counted;
}

const expectOk = (result: CliResult, what: string) =>
  expect(result.code, `${what}:\n${result.stdout}\n${result.stderr}`).toBe(0);

for (const { moment, variant, label } of cases) {
  describe(`SIGKILL ${label}`, () => {
    it("dmarc-recover, then pulumi up, ends with exactly the declared objects", async () => {
      const handle = await startEmulator();
      const partnerId = handle.partner.id;
      const env = { ...(await useEngine()), ...handle.env };
      const backend = fileURLToPath(env.PULUMI_BACKEND_URL ?? "");
      // A project folder of this test process and variant: the processes working in it are this run's own,
      // and the test stops them all, whatever else runs on the machine.
      const project = `reliability-crash-${variant.group ? "group" : "alone"}-${process.pid}`;
      const folder = programFolder(project, source);
      const stack = uniqueStackName("crash");
      const checkpointFolder = join(backend, ".pulumi", "stacks", project);
      const checkpoint = join(checkpointFolder, `${stack}.json`);
      const cli = (...args: string[]) => pulumiOk([...args, "--stack", stack], folder, env);
      await pulumiOk(["stack", "init", stack], folder, env);
      const started: number[] = [];
      let refusals = 0;

      try {
        if (moment.phase === "destroy") await cli("up", "--yes", "--skip-preview");
        for (const route of moment.hold ?? []) await handle.control("POST", "/faults", { route, latencyMs: HOLD_MS });
        const run = spawn("pulumi", [moment.phase, "--yes", "--skip-preview", "--non-interactive", "--stack", stack], {
          cwd: folder,
          env: { ...process.env, ...env },
          stdio: "ignore",
          // Its own process group, as a CI job's shell has.
          detached: true,
        });
        const exited = new Promise((resolve) => run.on("close", resolve));
        if (run.pid === undefined) throw new Error(`pulumi ${moment.phase} did not start`);
        started.push(run.pid);
        const children = await killAt(moment, handle, checkpointFolder, stack, run, variant.group);
        started.push(...children);
        await exited;

        // The killed run's plugins live on while their calls do: asked to keep them, the command refuses and
        // names them. A dry run, because the provider exits by itself once its calls are answered: should it
        // go between these two looks, the command finds none and must not recover the stack before the test does.
        const orphans = processesIn(folder).filter(isPlugin);
        if (orphans.some(isRunning)) {
          const kept = await dmarcRecover(["--stack", stack, "--keep-orphans", "--dry-run"], folder, env);
          if (processesIn(folder).filter(isPlugin).length > 0) {
            expect(kept.code, kept.stdout + kept.stderr).toBe(3);
            expect(kept.stderr).toMatch(/^refused: pid \d+ \(.*\) of a killed run is left running/m);
            refusals++;
          }
        }
        // The language host notices its engine is gone within seconds and takes the program down with it.
        await eventually(
          "the killed run's language host and program to end",
          async () => processesIn(folder).filter(isLanguageHostOrProgram),
          (left) => left.length === 0,
        );
        // Killing `pulumi` alone, the test lets the orphans' calls end, so that a dry run can be checked
        // to change nothing; killing the group, the recovery itself has to wait for them.
        if (!variant.group) {
          await eventually(
            "the orphaned plugins' calls to finish",
            () => stats(handle),
            (c) => inFlight(c) === 0,
          );
        }
        await handle.control("DELETE", "/faults");
        if (moment.cutCheckpoint) truncateSync(checkpoint, Math.floor(readFileSync(checkpoint).length / 2));
        if (moment.cutAttributes) truncateSync(`${checkpoint}.attrs`, 0);
        // What a user sees first: the next command fails, and the message tells what to run.
        const blocked = await pulumi(["up", "--yes", "--skip-preview", "--stack", stack], folder, env);
        expect(blocked.code).not.toBe(0);
        expect(describeInterruption(blocked.stdout + blocked.stderr, { stackName: stack })).toContain(
          `npx dmarc-recover --stack ${stack}`,
        );

        const before = {
          checkpoint: readFileSync(checkpoint),
          locks: lockFiles(backend, project, stack),
          counted: await stats(handle),
        };
        if (!variant.group) {
          // A dry run: a plan, and not one byte or call changed, the orphans left as they are.
          const dryRun = await dmarcRecover(["--stack", stack, "--dry-run"], folder, env);
          expectOk(dryRun, "dmarc-recover --dry-run");
          expect(dryRun.stdout).toContain("Dry run: nothing changed");
          expect(readFileSync(checkpoint).equals(before.checkpoint)).toBe(true);
          expect(lockFiles(backend, project, stack)).toEqual(before.locks);
          expect(writes(await stats(handle))).toBe(writes(before.counted));
          expect(processesIn(folder).filter(isPlugin)).toEqual(orphans.filter(isRunning));
        }

        const recovered = await dmarcRecover(["--stack", stack], folder, env);
        expectOk(recovered, "dmarc-recover");
        expect(recovered.stdout).toContain(`Next: pulumi up --stack ${stack}`);
        expect(lockFiles(backend, project, stack)).toEqual([]);
        // Every process the killed run left is gone, each one it stopped named.
        expect(processesIn(folder).filter(isRunning)).toEqual([]);
        const stopped = [...recovered.stdout.matchAll(/^stopped\s+pid (\d+) .*: waited ([\d.]+) s/gm)];
        for (const orphan of stopped) expect(orphans).toContain(Number(orphan[1]));
        const settled = settledByKind(recovered.stdout);
        await cli("up", "--yes", "--skip-preview");

        const everything = await emulatorState(handle);
        // Destroying a Subscription cancels it, and the service keeps cancelled subscriptions as its record:
        // after a destroy was cut off, those of the organisations it had not deleted yet stay, as they would
        // after a destroy and an up that nobody killed. They are history, not duplicates: nothing bills them.
        const snapshot = {
          ...everything,
          subscriptions: everything.subscriptions.filter(
            (subscription) => moment.phase === "up" || subscription.cancelledAt === null,
          ),
        };
        const cancelledRecords = everything.subscriptions.length - snapshot.subscriptions.length;
        const priceId = `price_${partnerId}_starter_monthly`;
        expect(inventory(snapshot, partnerId)).toEqual(declaredInventory(TENANTS, priceId));
        const state = JSON.parse((await cli("stack", "export")).stdout);
        expect(state.deployment.pending_operations ?? []).toEqual([]);
        expect(stateIds(state)).toEqual(serviceIds(snapshot, partnerId));
        // Every webhook's state holds the signing secret the service uses: none was adopted without one.
        const withSecrets = JSON.parse((await cli("stack", "export", "--show-secrets")).stdout) as typeof state;
        const secrets = (
          withSecrets.deployment.resources as { type: string; id?: string; outputs?: { secret?: unknown } }[]
        )
          .filter((resource) => resource.type.endsWith(":Webhook"))
          // Revealed secrets are exported as { plaintext: <the value as JSON> }.
          .map(
            (hook) => `${hook.id} ${JSON.parse((hook.outputs?.secret as { plaintext?: string })?.plaintext ?? "null")}`,
          )
          .sort();
        expect(secrets).toEqual(snapshot.webhooks.map((hook) => `${hook.objectId} ${hook.secret}`).sort());
        await cli("preview", "--expect-no-changes");

        // On the healthy stack the command changes nothing and says so.
        const healthy = { checkpoint: readFileSync(checkpoint), counted: await stats(handle) };
        const again = await dmarcRecover(["--stack", stack], folder, env);
        expectOk(again, "dmarc-recover on a healthy stack");
        expect(again.stdout).toContain("nothing to recover");
        expect(readFileSync(checkpoint).equals(healthy.checkpoint)).toBe(true);
        expect((await stats(handle)).requests).toBe(healthy.counted.requests);

        await cli("destroy", "--yes", "--skip-preview");
        expect(inventory(await emulatorState(handle), partnerId)).toEqual([]);
        report("crash", `${moment.name}, killing ${variant.name}`, {
          tenants: TENANTS,
          phase: moment.phase,
          deletesBeforeKill: deletes(before.counted),
          createsBeforeKill: creates(before.counted),
          settled,
          checkpointRepaired: /^(restored|repaired) /m.test(recovered.stdout),
          lockRemoved: recovered.stdout.includes("removed the lock"),
          orphansStopped: stopped.length,
          longestOrphanWaitSeconds: Math.max(0, ...stopped.map((orphan) => Number(orphan[2]))),
          cancelledSubscriptionsKept: cancelledRecords,
          refusedWhilePluginsRan: refusals > 0,
        });
      } finally {
        const survivors = [...started.flatMap((pid) => [pid, ...descendants(pid)]), ...processesIn(folder)];
        for (const survivor of survivors.filter(isRunning)) kill(survivor);
        await pulumi(["stack", "rm", "--yes", "--force", "--stack", stack], folder, env);
      }
    }, 600_000);
  });
}
