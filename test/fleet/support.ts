import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { fileURLToPath, pathToFileURL } from "node:url";
import { LocalWorkspace } from "@pulumi/pulumi/automation";
import { type Inventory, parseInventory } from "pulumi-dmarc-partner";
import { createClient, type DmarcClient } from "pulumi-dmarc-partner/client";
import type { FleetOptions, FleetReport, TenantFindings } from "pulumi-dmarc-partner/fleet";
import { stringify } from "yaml";
import { projectRoot } from "../../scripts/project.mjs";
import type { EmulatorHandle } from "../support/emulator";

export type Entry = Record<string, unknown>;

/** A tenant entry with one domain, named after its key. */
export function tenant(key: string, extra: Entry = {}): Entry {
  return {
    name: `Tenant ${key}`,
    key,
    group: "Main",
    plan: "Starter",
    domains: [{ name: `${key}.example` }],
    ...extra,
  };
}

/** The inventory of these tenant entries, with the file's other sections (`offboard:`) from `sections`. */
export function inventoryOf(tenants: Entry[], sections: Entry = {}): Inventory {
  return parseInventory(stringify({ tenants, ...sections }), "tenants.yaml");
}

/** A project folder of its own under .cache/projects whose node_modules is the repository's, as a partner's project has the package installed. */
export function fleetProjectFolder(name: string): string {
  const folder = join(projectRoot, ".cache", "projects", name);
  mkdirSync(folder, { recursive: true });
  const modules = join(folder, "node_modules");
  if (!existsSync(modules)) symlinkSync(join(projectRoot, "node_modules"), modules, "dir");
  return folder;
}

/**
 * A file backend of the fleet's own. The fleet reads every stack of its
 * backend and refuses a tenant another stack declares, and the suite's
 * fleets declare the same few tenants ("alpha", "Tenant alpha") side by side.
 */
export function fleetBackendUrl(fleet: string): string {
  const folder = join(projectRoot, ".cache", "fleet-backends", fleet);
  mkdirSync(folder, { recursive: true });
  return pathToFileURL(folder).href;
}

export function uniqueFleetName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}${randomBytes(2).toString("hex")}`;
}

/** Runner options against the emulator, with progress captured instead of printed. */
export function fleetOptions(
  emulator: EmulatorHandle,
  fleet: string,
  inventory: Inventory,
  extra: Partial<FleetOptions> = {},
): FleetOptions & { progressText: () => string } {
  const projectDir = fleetProjectFolder("dmarc-fleet-test");
  const progress = new PassThrough();
  let text = "";
  progress.on("data", (chunk: Buffer) => {
    text += chunk.toString();
  });
  return {
    fleet,
    projectName: "dmarc-fleet-test",
    projectDir,
    stateDir: join(projectDir, ".dmarc-fleet", fleet),
    config: { ...emulator.stackConfig, "dmarc:maxAttempts": { value: "2" } },
    env: { PULUMI_BACKEND_URL: fleetBackendUrl(fleet) },
    inventory,
    shardSize: 2,
    concurrency: 2,
    progress,
    progressText: () => text,
    ...extra,
  };
}

export function serviceClient(emulator: EmulatorHandle): DmarcClient {
  return createClient({
    baseUrl: emulator.emulator.url,
    clientId: emulator.partner.clientId,
    clientSecret: emulator.partner.clientSecret,
  });
}

/** The service's organisations by name, with their ids. */
export async function organizationsByName(client: DmarcClient): Promise<Map<string, string>> {
  return new Map((await client.listOrganizations()).map((organization) => [organization.name, organization.id]));
}

/** The id of the service's organisation of that name. */
export async function organizationIdNamed(client: DmarcClient, name: string): Promise<string> {
  const id = (await organizationsByName(client)).get(name);
  if (!id) throw new Error(`no organisation named ${name}`);
  return id;
}

/** A fleet run's report, and the requests the emulator answered while it ran. */
export async function requestsDuring(
  emulator: EmulatorHandle,
  work: () => Promise<FleetReport>,
): Promise<{ report: FleetReport; requests: number }> {
  const count = async () => (await emulator.control<{ requests: number }>("GET", "/stats")).requests;
  const before = await count();
  const report = await work();
  return { report, requests: (await count()) - before };
}

type FindingsList = "created" | "updated" | "replaced" | "deleted" | "differs" | "missing";

/**
 * Each tenant's findings as sorted lines, `<list> <type> <name>`, with
 * `name: old -> new` for every changed property, headed by `new` and
 * `offboarding <status>` where they apply: one value to compare exactly.
 */
export function findingsOutline(
  tenants: readonly TenantFindings[],
  lists: readonly FindingsList[],
): Record<string, string[]> {
  return Object.fromEntries(
    tenants.map((found) => [
      found.key,
      [
        ...(found.new ? ["new"] : []),
        ...(found.offboarding ? [`offboarding ${found.offboarding.status}`] : []),
        ...lists.flatMap((list) =>
          found[list].map((object) => {
            const changed = list === "created" ? [] : (object.properties ?? []);
            const values = changed.map(
              (property) => ` ${property.name}: ${String(property.old)} -> ${String(property.new)}`,
            );
            return `${list} ${object.type} ${object.name}${values.join("")}`;
          }),
        ),
      ].sort(),
    ]),
  );
}

/** The folder of the fleet's file backend: its own, else the tests' shared one. */
export function backendFolder(options: Partial<Pick<FleetOptions, "env">>): string {
  return fileURLToPath(options.env?.PULUMI_BACKEND_URL ?? process.env.PULUMI_BACKEND_URL ?? "");
}

/**
 * The fleet's shard stacks in the tests' file backend, by their checkpoint
 * files: the CLI's `stack ls` reads every stack's checkpoint in the shared
 * backend, and fails while another test's run writes one.
 */
export function fleetStackNames(
  options: Pick<FleetOptions, "projectName"> & Partial<Pick<FleetOptions, "env">>,
  fleet: string,
): string[] {
  const folder = join(backendFolder(options), ".pulumi", "stacks", options.projectName);
  const names = existsSync(folder) ? readdirSync(folder) : [];
  return names
    .flatMap((name) => /^(.+)\.json$/.exec(name)?.[1] ?? [])
    .filter((name) => name.startsWith(`${fleet}-`))
    .sort();
}

/**
 * Removes the fleet's stacks (its config stack too) from the tests' file
 * backend without destroying what they hold: the objects live in the test's
 * emulator only, which closes with the test, and a destroy would cost engine
 * runs of every shard for nothing the test checks.
 */
export async function dropFleetStacks(
  options: Pick<FleetOptions, "projectDir" | "projectName"> & Partial<Pick<FleetOptions, "env">>,
  fleet: string,
): Promise<void> {
  if (options.env?.PULUMI_BACKEND_URL) {
    // A backend of the fleet's own holds nothing else.
    rmSync(backendFolder(options), { recursive: true, force: true });
    return;
  }
  const workspace = await LocalWorkspace.create({
    workDir: options.projectDir,
    projectSettings: { name: options.projectName, runtime: "nodejs" },
  });
  for (const name of fleetStackNames(options, fleet)) await workspace.removeStack(name, { force: true });
}
