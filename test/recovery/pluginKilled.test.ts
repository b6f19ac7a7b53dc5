import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { projectRoot } from "../../scripts/project.mjs";
import { generateSdks } from "../../scripts/sdk/index.mjs";
import { compileNodejsSdk } from "../../scripts/sdk/packages.mjs";
import { inventory, serviceIds } from "../reliability/fleet";
import {
  type CliResult,
  DOMAIN_CREATE_ROUTES,
  descendants,
  domainCreates,
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
  routeCount,
  type Stats,
  startCommand,
  stats,
} from "../reliability/harness";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { uniqueStackName, useEngine } from "../support/engine";
import { pluginFolder } from "../support/pluginProject";

// A killed `pulumi up` of a program on the provider plugin's executable
// (Pulumi YAML, and a TypeScript program on the generated SDK), killed at one
// moment each, then what docs/guides/recovery.md tells a plugin user: the
// executable's `recover` (dmarc-recover, run on a PATH with no node, as on a
// Python or Go team's image), then `pulumi up`. Afterwards the service holds exactly the one tenant declared
// (no second organisation, group, webhook, invitation or subscription), the
// state records each object once with nothing pending, no process of the
// killed run is left, and a preview shows no change.

const ENGINE_TIMEOUT = 600_000;
// Calls on the held routes wait this long in the emulator before it carries them out, as a slow service does.
const HOLD_MS = 4_000;
// Killing pulumi alone, long enough that the command finds the orphaned plugin still waiting on its held call:
// a command that read the service without waiting for it would find nothing, and the up would create a second.
const ORPHAN_HOLD_MS = 15_000;

const ORGANIZATION_CREATE = "POST /v1/organizations";
const TENANT_CREATES = [
  "POST /v1/domain-groups",
  "POST /v1/partners/subscriptions/assign",
  "POST /v1/webhooks",
  "POST /v1/users/invite",
];
const DOMAIN_READ = "GET /v1/domains/:domain";

/** The tenant both programs declare (the YAML program spells it out). */
const tenant = {
  name: "Hooli",
  group: "Production",
  domains: ["hooli.example", "hooli-mail.example"],
  webhook: { name: "Hooli events", url: "http://127.0.0.1:9/hooli", events: ["domain.verified"] },
  admin: "ops@hooli.example",
};

const zoneKey = { name: "hooli-update", algorithm: "hmac-sha256" as const, secret: randomBytes(32).toString("base64") };

/** The YAML program, as a partner writes it: test/fixtures/plugin/killedTenant.yaml. */
const yamlProgram = parse(readFileSync(join(projectRoot, "test", "fixtures", "plugin", "killedTenant.yaml"), "utf8"));

/** The TypeScript program on the generated SDK, loaded from `sdkEntry`: the same tenant, without the DNS record. */
function sdkProgramSource(sdkEntry: string): string {
  return `const dmarc = require(${JSON.stringify(sdkEntry)});
const tenant = ${JSON.stringify(tenant)};

const org = new dmarc.Organization("hooli", { name: tenant.name });
const group = new dmarc.DomainGroup("production", { organizationId: org.organizationId, name: tenant.group });
for (const domain of tenant.domains)
  new dmarc.Domain(domain, { organizationId: org.organizationId, domain, groupId: group.groupId });
new dmarc.Webhook("events", { ...tenant.webhook, ownerId: org.organizationId });
new dmarc.Subscription("plan", {
  organizationId: org.organizationId,
  priceId: dmarc.getPriceIdOutput({ plan: "Business", frequency: "yearly" }).priceId,
});
new dmarc.Invitation("admin", { organizationId: org.organizationId, email: tenant.admin });
`;
}

type ProgramKind = "yaml" | "sdk";

interface Moment {
  name: string;
  program: ProgramKind;
  /** Routes the emulator holds, so the kill finds their calls in flight. */
  hold?: string[];
  /** The kill comes once the service's counters show this. */
  when: (counted: Stats) => boolean;
  /**
   * Kill the plugin with the engine, as a runner torn down with its job
   * does; otherwise `pulumi` alone, its plugin left running as an orphan.
   */
  withPlugin: boolean;
  representative?: boolean;
}

const moments: Moment[] = [
  {
    name: "with the organisation's create in flight",
    program: "yaml",
    hold: [ORGANIZATION_CREATE],
    when: (c) => routeCount(c, ORGANIZATION_CREATE) >= 1,
    withPlugin: true,
  },
  {
    name: "right after the organisation's create",
    program: "yaml",
    when: (c) => routeCount(c, ORGANIZATION_CREATE) >= 1 && inFlight(c) === 0,
    withPlugin: false,
  },
  {
    name: "with the group, subscription, webhook and invitation creates in flight",
    program: "yaml",
    hold: TENANT_CREATES,
    when: (c) => TENANT_CREATES.every((route) => routeCount(c, route) >= 1),
    withPlugin: true,
    representative: true,
  },
  {
    name: "mid-way through the domains",
    program: "yaml",
    hold: DOMAIN_CREATE_ROUTES,
    when: (c) => domainCreates(c) >= 1,
    withPlugin: false,
  },
  {
    name: "during verification",
    program: "yaml",
    hold: [DOMAIN_READ],
    // Only the verification reads a domain in an up, once its record is published: its first read is held.
    when: (c) => routeCount(c, DOMAIN_READ) >= 1,
    withPlugin: true,
  },
  {
    name: "with the organisation's create in flight",
    program: "sdk",
    hold: [ORGANIZATION_CREATE],
    when: (c) => routeCount(c, ORGANIZATION_CREATE) >= 1,
    withPlugin: false,
    representative: true,
  },
];

const cases = moments.filter((moment) => FULL || moment.representative);

/** The plugin's process: its executable, serving the engine (not its `recover`). */
function isDmarcPlugin(pid: number): boolean {
  try {
    const [command, subcommand] = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    return /(^|\/)pulumi-resource-dmarc$/.test(command ?? "") && subcommand !== "recover";
  } catch {
    return false;
  }
}

/** The engine's folder alone: `pulumi` and its language hosts, and no `node`, as on an image without Node.js. */
function pathWithoutNode(env: Record<string, string>): string {
  const engineBin = (env.PATH ?? "").split(":")[0] as string;
  if (existsSync(join(engineBin, "node")) || !existsSync(join(engineBin, "pulumi"))) {
    throw new Error(`${engineBin} is not the engine's folder without node`);
  }
  return engineBin;
}

/** The service ids the state records for the six types the service holds, as {@link serviceIds} spells them. */
function stateIds(deployment: { deployment: { resources?: { type: string; id?: string }[] } }): string[] {
  const types = new Set(["Organization", "DomainGroup", "Domain", "Webhook", "Subscription", "Invitation"]);
  return (deployment.deployment.resources ?? [])
    .map((resource) => ({ type: resource.type.replace(/^dmarc:index:/, ""), id: resource.id }))
    .filter(({ type }) => types.has(type))
    .map(({ type, id }) => `${type} ${id}`)
    .sort();
}

/** What the service must hold: the one tenant, each object once. */
function declaredInventory(priceId: string): string[] {
  return [
    `organization ${tenant.name}`,
    `group ${tenant.name} / ${tenant.group}`,
    ...tenant.domains.map((domain) => `domain ${tenant.name} / ${domain} sending in ${tenant.group}`),
    `webhook ${tenant.name} / ${tenant.webhook.name} ${tenant.webhook.url} ${tenant.webhook.events.join(",")} active`,
    `subscription ${tenant.name} / ${priceId} active`,
    `user ${tenant.name} / ${tenant.admin} admin`,
  ].sort();
}

/** Counts the command's lines by what it did to each resource. */
function settledByKind(output: string): Record<string, number> {
  const counted: Record<string, number> = {};
  for (const match of output.matchAll(/^(adopted|recreated|dropped|refreshed|left|check)\s+\S+ \((\w+)/gm)) {
    const key = `${match[1]} ${match[2]}`;
    counted[key] = (counted[key] ?? 0) + 1;
  }
  return counted;
}

const expectOk = (result: CliResult, what: string) =>
  expect(result.code, `${what}:\n${result.stdout}\n${result.stderr}`).toBe(0);

describe.skipIf(cases.length === 0)("a killed pulumi up of a program on the provider plugin", () => {
  let emulator: EmulatorHandle;
  let env: Record<string, string>;
  let work: string;
  let executableFolder: string;
  const folders: Partial<Record<ProgramKind, string>> = {};

  beforeAll(async () => {
    env = await useEngine();
    emulator = await startTestEmulator({ dns: { port: 0, checkIntervalMs: 500, tsigKey: zoneKey } });
    work = mkdtempSync(join(tmpdir(), "dmarc-plugin-killed-"));
    executableFolder = await pluginFolder();
    const plugins = { providers: [{ name: "dmarc", path: executableFolder }] };
    if (cases.some((moment) => moment.program === "yaml")) {
      const yaml = programFolder(`plugin-killed-yaml-${process.pid}`, "");
      rmSync(join(yaml, "index.ts"));
      writeFileSync(
        join(yaml, "Pulumi.yaml"),
        stringify({ name: "plugin-killed-yaml", runtime: "yaml", plugins, ...yamlProgram }),
      );
      folders.yaml = yaml;
    }
    if (cases.some((moment) => moment.program === "sdk")) {
      const { nodejs } = await generateSdks(join(work, "sdk"), ["nodejs"]);
      const entry = await compileNodejsSdk(nodejs as string);
      const sdk = programFolder(`plugin-killed-sdk-${process.pid}`, sdkProgramSource(entry));
      writeFileSync(join(sdk, "Pulumi.yaml"), stringify({ name: "plugin-killed-sdk", runtime: "nodejs", plugins }));
      folders.sdk = sdk;
    }
  }, ENGINE_TIMEOUT);

  afterAll(async () => {
    await emulator?.emulator.close();
    for (const folder of Object.values(folders)) rmSync(folder, { recursive: true, force: true });
    if (work) rmSync(work, { recursive: true, force: true });
  });

  for (const moment of cases) {
    it(
      `killed ${moment.name} (${moment.program === "yaml" ? "Pulumi YAML" : "TypeScript SDK"}, ${moment.withPlugin ? "engine and plugin" : "engine alone"}): dmarc-recover, then pulumi up, leaves exactly the tenant`,
      async () => {
        const folder = folders[moment.program] as string;
        const stack = uniqueStackName("killed");
        const cli = (...args: string[]) => pulumiOk([...args, "--stack", stack], folder, env);
        const started: number[] = [];
        await emulator.control("POST", "/reset");
        await pulumiOk(["stack", "init", stack], folder, env);
        try {
          for (const [key, { value, secret }] of Object.entries(emulator.stackConfig))
            await cli("config", "set", ...(secret ? ["--secret"] : []), key, value);
          if (moment.program === "yaml") {
            await cli("config", "set", "dnsServer", emulator.emulator.dnsServer ?? "");
            await cli("config", "set", "dnsKeyName", zoneKey.name);
            await cli("config", "set", "--secret", "dnsKeySecret", zoneKey.secret);
          }
          for (const route of moment.hold ?? [])
            await emulator.control("POST", "/faults", {
              route,
              processingMs: moment.withPlugin ? HOLD_MS : ORPHAN_HOLD_MS,
            });

          const run = startCommand(
            "pulumi",
            ["up", "--yes", "--skip-preview", "--non-interactive", "--stack", stack],
            folder,
            env,
            { detached: true },
          );
          const pid = run.child.pid ?? 0;
          started.push(pid);
          const counted = await eventually(moment.name, () => stats(emulator), moment.when, 1_200);
          const children = descendants(pid);
          started.push(...children);
          const plugins = children.filter(isDmarcPlugin);
          expect(plugins.length, "the plugin's process under the killed pulumi").toBeGreaterThan(0);
          kill(pid);
          if (moment.withPlugin) for (const plugin of plugins) kill(plugin);
          const killed = await run.done;
          expect(killed.code, "the killed pulumi up").not.toBe(0);

          if (moment.withPlugin) {
            // What the guide says of a run whose plugin died with it: the service may still carry out a call it
            // had received; the command is run once that time has passed. The emulator's counters show it.
            await eventually(
              "the held calls to be carried out",
              () => stats(emulator),
              (c) => inFlight(c) === 0,
            );
            // A plain rerun stops on the lock the killed run left, Pulumi's message naming `pulumi cancel`.
            const blocked = await pulumi(["up", "--yes", "--skip-preview", "--stack", stack], folder, env);
            expect(blocked.code).not.toBe(0);
            expect(blocked.stdout + blocked.stderr).toMatch(/the stack is currently locked[\s\S]*pulumi cancel/);
          }
          await emulator.control("DELETE", "/faults");

          // The guide's words for a plugin program. Killing pulumi alone, they come at once: the orphaned plugin
          // may still be waiting on its held call, and the command waits for it before it reads the service.
          const recovered = await startCommand(
            join(executableFolder, "pulumi-resource-dmarc"),
            ["recover", "--stack", stack],
            folder,
            { ...env, PATH: pathWithoutNode(env) },
          ).done;
          expectOk(recovered, "dmarc-recover");
          expect(recovered.stdout).toContain(`Next: pulumi up --stack ${stack}`);
          expect(processesIn(folder).filter(isRunning)).toEqual([]);
          const stopped = [...recovered.stdout.matchAll(/^stopped\s+pid (\d+) \(provider: /gm)].map((line) =>
            Number(line[1]),
          );
          // Killing pulumi alone with a call held, the plugin was still waiting on it: found, waited for, stopped.
          // (A YAML program's engine may have started a second plugin process, for the schema, ended by then.)
          if (moment.hold && !moment.withPlugin) expect(stopped.length).toBeGreaterThan(0);
          for (const orphan of stopped) expect(plugins).toContain(orphan);
          await cli("up", "--yes", "--skip-preview");

          const snapshot = await emulatorState(emulator);
          const { partner } = emulator;
          expect(inventory(snapshot, partner.id)).toEqual(declaredInventory(`price_${partner.id}_business_yearly`));
          const state = JSON.parse((await cli("stack", "export")).stdout);
          expect(state.deployment.pending_operations ?? []).toEqual([]);
          expect(stateIds(state)).toEqual(serviceIds(snapshot, partner.id));
          if (moment.program === "yaml") expect((await cli("stack", "output", "verified")).stdout.trim()).toBe("true");
          await cli("preview", "--expect-no-changes");

          report("plugin-killed", `${moment.name}, ${moment.program}`, {
            withPlugin: moment.withPlugin,
            createsBeforeKill: Object.entries(counted.byRoute)
              .filter(([route]) => route.startsWith("POST ") && route !== "POST /auth/token")
              .reduce((sum, [, n]) => sum + n, 0),
            settled: settledByKind(recovered.stdout),
            pluginsStopped: stopped.length,
          });
        } finally {
          const survivors = [...started.flatMap((pid) => [pid, ...descendants(pid)]), ...processesIn(folder)];
          for (const survivor of survivors.filter(isRunning)) kill(survivor);
          await pulumi(["stack", "rm", "--yes", "--force", "--stack", stack], folder, env);
        }
      },
      ENGINE_TIMEOUT,
    );
  }
});
