import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseInventory } from "pulumi-dmarc-partner";
import type { DmarcClient } from "pulumi-dmarc-partner/client";
import {
  exitCodeOf,
  FLEET_EXIT,
  type FleetInvocation,
  OwnershipConflict,
  runFleet,
  runImport,
  shardRecovery,
} from "pulumi-dmarc-partner/fleet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { startCommand } from "../reliability/harness";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { useEngine } from "../support/engine";
import {
  backendFolder,
  type Entry,
  fleetBackendUrl,
  fleetOptions,
  fleetStackNames,
  organizationIdNamed,
  serviceClient,
  tenant,
  uniqueFleetName,
} from "./support";

// Two teams' fleets on one backend, red and blue, both listing "Acme Corp".
// The service gives an organisation no owner, so a customer declared in two
// places could be adopted by one fleet's recovery and deleted by its destroy:
// blue is refused before it sends a request, a tenant two shards hold is
// refused, an offboarding or destroy never deletes an organisation another
// stack records, and a recovery that cannot tell whose an object is leaves
// it to a person, who settles it with one fleet command.

let emulator: EmulatorHandle;
let client: DmarcClient;
const red = uniqueFleetName("red");
const blue = uniqueFleetName("blue");
const backend = { PULUMI_BACKEND_URL: fleetBackendUrl(red) };
const acme = tenant("acme-corp", { name: "Acme Corp", domains: [] });
let acmeId: string;

function inventory(source: string, tenants: Entry[], sections: Entry = {}) {
  return parseInventory(stringify({ tenants, ...sections }), source);
}

/** Both fleets' options: one backend, one project. */
function options(fleet: string, tenants: Entry[], extra: Parameters<typeof fleetOptions>[3] = {}) {
  return fleetOptions(emulator, fleet, inventory(`${fleet === red ? "red" : "blue"}.yaml`, tenants), {
    env: backend,
    ...extra,
  });
}

function checkpointFile(shard: string): string {
  return join(backendFolder({ env: backend }), ".pulumi", "stacks", "dmarc-fleet-test", `${shard}.json`);
}

/** Another shard whose state is `shard`'s, as a stack import or a run of an older version could leave it. */
function copyShard(shard: string, to: string): void {
  writeFileSync(checkpointFile(to), readFileSync(checkpointFile(shard), "utf8").replaceAll(shard, to));
}

/** The requests the emulator answered while `work` ran. */
async function requestsDuring(work: () => Promise<unknown>): Promise<number> {
  const count = async () => (await emulator.control<{ requests: number }>("GET", "/stats")).requests;
  const before = await count();
  await work().catch(() => undefined);
  return (await count()) - before;
}

const invocation = (fleetOptionsGiven: ReturnType<typeof options>): FleetInvocation => ({
  command: "up",
  json: false,
  detailedExitcode: false,
  failOnUnmanaged: false,
  options: fleetOptionsGiven,
});

beforeAll(async () => {
  await useEngine();
  emulator = await startTestEmulator();
  client = serviceClient(emulator);
  expect((await runFleet("up", options(red, [acme]))).ok).toBe(true);
  acmeId = await organizationIdNamed(client, "Acme Corp");
}, 300_000);

afterAll(async () => {
  rmSync(backendFolder({ env: backend }), { recursive: true, force: true });
  await emulator?.emulator.close();
});

describe("one customer in two fleets on one backend", () => {
  it("refuses blue's preview and up before any request, naming red's shard and blue's inventory and tenant", async () => {
    for (const command of ["preview", "up"] as const) {
      let refusal: unknown;
      const requests = await requestsDuring(() =>
        runFleet(command, options(blue, [acme])).catch((error: unknown) => {
          refusal = error;
          throw error;
        }),
      );
      expect(requests).toBe(0);
      expect(refusal).toBeInstanceOf(OwnershipConflict);
      const message = (refusal as Error).message;
      expect(message).toContain(
        `blue.yaml: tenant acme-corp ("Acme Corp"): stack dmarc-fleet-test/${red}-001 (a shard of fleet ${red}) declares Tenant acme-corp; ` +
          `stack dmarc-fleet-test/${red}-001 (a shard of fleet ${red}) declares Organization acme-corp (${acmeId}) named "Acme Corp"`,
      );
    }
    expect(fleetStackNames(options(blue, []), blue)).toEqual([]);

    // Blue's import leaves out the organisation red's shard records: its entry would only be refused.
    const { inventory: _none, ...blueOptions } = options(blue, []);
    const inventoryPath = join(blueOptions.stateDir, "imported.yaml");
    rmSync(inventoryPath, { force: true });
    const imported = await runImport({ ...blueOptions, inventoryPath });
    expect(imported.managed).toEqual([
      { organizationId: acmeId, name: "Acme Corp", by: `stack dmarc-fleet-test/${red}-001 (a shard of fleet ${red})` },
    ]);
    expect(imported.written).toEqual([]);
  }, 120_000);

  it("refuses a tenant two shards of one fleet hold, naming both, in the per-shard form too", async () => {
    copyShard(`${red}-001`, `${red}-002`);
    try {
      for (const only of [undefined, [`${red}-001`]]) {
        await expect(runFleet("up", options(red, [acme], only ? { only } : {}))).rejects.toThrow(
          `shards ${red}-001 and ${red}-002 of fleet ${red} both hold it`,
        );
      }
    } finally {
      rmSync(checkpointFile(`${red}-002`));
    }
  }, 120_000);

  it("fails a shard whose recovery cannot tell whose an object is, exit 7, and one fleet command with --drop settles it", async () => {
    // A create of a second "Acme Corp" left pending by a killed run, with no lock to date the run,
    // and an "Acme Corp" no stack records on the service: nothing shows whether the run made it.
    const file = checkpointFile(`${red}-001`);
    const stored = JSON.parse(readFileSync(file, "utf8"));
    const latest = stored.checkpoint.latest;
    const organization = latest.resources.find((resource: { type: string }) => resource.type.endsWith("Organization"));
    const urn = `${organization.urn}-twin`;
    const { id: _id, outputs: _outputs, ...pending } = { ...organization, urn };
    latest.pending_operations = [{ resource: pending, type: "creating" }];
    writeFileSync(file, JSON.stringify(stored));
    const stray = await client.createOrganization({ name: "Acme Corp" });

    const rerun = `npx dmarc-fleet up --fleet ${red}`;
    const stopped = options(red, [acme], { recover: shardRecovery({ rerun }) });
    const failed = await runFleet("up", stopped);
    expect(failed.results[0]?.status).toBe("failed");
    const report = failed.results[0]?.unsettled?.join("\n") ?? "";
    expect(report).toContain(`found ${stray.id} (`);
    expect(report).toContain(`to adopt ${stray.id}: ${rerun} --adopt '${urn}=${stray.id}'`);
    expect(report).toContain(`${rerun} --drop '${urn}'`);
    expect(exitCodeOf(failed, invocation(stopped))).toBe(FLEET_EXIT.person.code);

    // Each shard's recovery takes only the decisions whose URN names its stack.
    const elsewhere = urn.replace(`${red}-001`, `${red}-009`);
    const decisions = { adopt: [], drop: [urn, elsewhere] };
    const settled = await runFleet("up", options(red, [acme], { recover: shardRecovery({ decisions, rerun }) }));
    expect(settled.results[0]).toMatchObject({ status: "done", recovered: "dropped 1" });
    await client.deleteOrganization(stray.id);
  }, 300_000);

  it("never deletes red's organisation from blue's shard: its offboarding and blue's destroy leave that tenant out", async () => {
    // The outcome: blue's shard holds red's organisation (adopted by name before recovery weighed evidence).
    copyShard(`${red}-001`, `${blue}-001`);
    const bravo = tenant("bravo", { domains: [] });
    const offboarded = await runFleet(
      "up",
      fleetOptions(emulator, blue, inventory("blue.yaml", [bravo], { offboard: [{ key: "acme-corp" }] }), {
        env: backend,
      }),
    );
    expect(offboarded.results[0]).toMatchObject({ shard: `${blue}-001`, status: "done" });
    expect(offboarded.totals.tenants.refused).toBe(1);
    const refusal = offboarded.tenants.find((found) => found.key === "acme-corp")?.offboarding?.refusal;
    expect(refusal).toContain(
      `its Organization acme-corp (${acmeId}) is recorded by stack dmarc-fleet-test/${red}-001 (a shard of fleet ${red}) too`,
    );
    expect(refusal).toContain(`pulumi state delete --stack ${blue}-001 --target-dependents`);
    const bravoId = await organizationIdNamed(client, "Tenant bravo");

    const destroyed = await runFleet("destroy", options(blue, [bravo]));
    expect(destroyed.results[0]).toMatchObject({ shard: `${blue}-001`, status: "done" });
    expect(destroyed.results[0]?.removed).toBeUndefined();
    expect(destroyed.totals.tenants.refused).toBe(1);
    expect(await client.getOrganization(bravoId)).toBeUndefined();
    expect((await client.getOrganization(acmeId))?.name).toBe("Acme Corp");

    // The refusal's command forgets the tenant in blue's shard; the next destroy removes the emptied stack.
    const forget = /: (pulumi state delete .*) \(in \.dmarc-fleet\/work\/[^)]+\)$/.exec(refusal ?? "")?.[1];
    const blueOptions = options(blue, []);
    const workDir = join(blueOptions.stateDir, "work", `${blue}-001`);
    const forgotten = await startCommand("sh", ["-c", `${forget} --yes`], workDir, {
      ...(await useEngine()),
      ...backend,
    }).done;
    expect(forgotten.code, forgotten.stderr).toBe(0);
    const emptied = await runFleet("destroy", blueOptions);
    expect(emptied.results[0]).toMatchObject({ shard: `${blue}-001`, status: "done", removed: true });
    expect(fleetStackNames(blueOptions, blue)).toEqual([]);
    expect((await client.getOrganization(acmeId))?.name).toBe("Acme Corp");
  }, 300_000);
});
