import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import {
  type CliResult,
  descendants,
  dmarcRecover,
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
  startCommand,
  stats,
} from "../reliability/harness";
import { type EmulatorHandle, partnerClient, startTestEmulator } from "../support/emulator";
import { uniqueStackName, useEngine } from "../support/engine";
import { pluginFolder } from "../support/pluginProject";

// Two stacks of one project, `a` and `b`, declare the same organisation,
// "Acme Corp", with a group in it; `a`'s `up` is killed while its
// organisation's create is held by the service, before it received it or
// after it carried it out; `b`'s organisation is made before `a`'s run or
// during it, and in one case a person makes a third "Acme Corp" by hand
// meanwhile. Then what docs/guides/recovery.md says: the recovery command
// (the TypeScript package's `dmarc-recover`, or the plugin's executable's
// `recover` on a PATH with no node, once under `timeout` as a pipeline runs
// it), `pulumi up`, `pulumi destroy`. Recovery must adopt only what `a`'s
// run made, drop a create the service never received, and leave it to a
// person when two objects could each be `a`'s; afterwards each stack holds
// exactly one organisation and one group, made by itself, and `a`'s destroy
// leaves `b`'s and the person's organisations on the service.

const ENGINE_TIMEOUT = 600_000;
const NAME = "Acme Corp";
const ORGANIZATION_CREATE = "POST /v1/organizations";

type Face = "typescript" | "yaml";

interface Case {
  face: Face;
  /** `beforeReceipt`: the service held the create before receiving it (`latencyMs`); `afterCarriedOut`: it received it, and carried it out after the kill (`processingMs`). */
  kill: "beforeReceipt" | "afterCarriedOut";
  /** When `b` made its organisation: before `a`'s run began, or during it. */
  others: "before" | "during";
  /** A person makes one more organisation of the name by hand during `a`'s run. */
  byHand?: true;
  /** The recovery runs under `timeout`, as a pipeline's step does. */
  wrapped?: true;
  representative?: true;
}

const matrix: Case[] = [
  { face: "yaml", kill: "beforeReceipt", others: "before", wrapped: true, representative: true },
  { face: "typescript", kill: "afterCarriedOut", others: "before", byHand: true, representative: true },
  { face: "typescript", kill: "beforeReceipt", others: "before" },
  { face: "typescript", kill: "beforeReceipt", others: "during" },
  { face: "typescript", kill: "afterCarriedOut", others: "during" },
  { face: "yaml", kill: "beforeReceipt", others: "during" },
  { face: "yaml", kill: "afterCarriedOut", others: "before" },
  { face: "yaml", kill: "afterCarriedOut", others: "during", wrapped: true },
  { face: "yaml", kill: "afterCarriedOut", others: "during", byHand: true },
];
const cases = matrix.filter((entry) => FULL || entry.representative);

const TYPESCRIPT_PROGRAM = `import * as dmarc from "pulumi-dmarc-partner";

const acme = new dmarc.Organization("acme", { name: ${JSON.stringify(NAME)} });
new dmarc.DomainGroup("production", { organizationId: acme.organizationId, name: "Production" });
export const organizationId = acme.organizationId;
`;

/** The same program in Pulumi YAML, on the plugin's executable; `${...}` is YAML's interpolation, not JavaScript's. */
const yamlProgram = (executableFolder: string) => ({
  name: "ownership-yaml",
  runtime: "yaml",
  plugins: { providers: [{ name: "dmarc", path: executableFolder }] },
  resources: {
    acme: { type: "dmarc:index:Organization", properties: { name: NAME } },
    production: {
      type: "dmarc:index:DomainGroup",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Pulumi YAML's interpolation
      properties: { organizationId: "${acme.organizationId}", name: "Production" },
    },
  },
  // biome-ignore lint/suspicious/noTemplateCurlyInString: Pulumi YAML's interpolation
  outputs: { organizationId: "${acme.organizationId}" },
});

/** The engine's folder alone: `pulumi` and its language hosts, and no `node`, as on an image without Node.js. */
function pathWithoutNode(env: Record<string, string>): string {
  const engineBin = (env.PATH ?? "").split(":")[0] as string;
  if (existsSync(join(engineBin, "node")) || !existsSync(join(engineBin, "pulumi"))) {
    throw new Error(`${engineBin} is not the engine's folder without node`);
  }
  return engineBin;
}

const describeCase = (entry: Case) =>
  `${entry.face === "yaml" ? "Pulumi YAML on the executable" : "TypeScript"}, the create held ${entry.kill === "beforeReceipt" ? "before the service received it" : "and carried out after the kill"}, the other stack's organisation made ${entry.others} the run${entry.byHand ? ", and one more by hand during it" : ""}${entry.wrapped ? ", recovered under timeout" : ""}`;

const outcome = (entry: Case) => (entry.kill === "beforeReceipt" ? "dropped" : entry.byHand ? "left" : "adopted");

describe.skipIf(cases.length === 0)("recovery adopts only what the killed run made", () => {
  let emulator: EmulatorHandle;
  let env: Record<string, string>;
  let executableFolder: string;
  const folders: Partial<Record<Face, string>> = {};

  beforeAll(async () => {
    env = await useEngine();
    emulator = await startTestEmulator();
    executableFolder = await pluginFolder();
    folders.typescript = programFolder(`ownership-ts-${process.pid}`, TYPESCRIPT_PROGRAM);
    const yaml = programFolder(`ownership-yaml-${process.pid}`, "");
    rmSync(join(yaml, "index.ts"));
    writeFileSync(join(yaml, "Pulumi.yaml"), stringify(yamlProgram(executableFolder)));
    folders.yaml = yaml;
  }, ENGINE_TIMEOUT);

  afterAll(async () => {
    await emulator?.emulator.close();
    for (const folder of Object.values(folders)) rmSync(folder, { recursive: true, force: true });
  });

  /** The organisations of the name on the service, by id. */
  async function acmes(): Promise<string[]> {
    const client = partnerClient(emulator);
    return (await client.listOrganizations()).filter((org) => org.name === NAME).map((org) => org.id);
  }

  /** The group ids of the organisation. */
  async function groupsOf(organizationId: string): Promise<string[]> {
    return (await partnerClient(emulator).listDomainGroups(organizationId)).map((group) => group.id);
  }

  for (const entry of cases) {
    it(
      `${describeCase(entry)}: ${outcome(entry)}, and each stack keeps only its own`,
      async () => {
        const folder = folders[entry.face] as string;
        const [a, b] = [uniqueStackName("a"), uniqueStackName("b")];
        const on =
          (stack: string) =>
          (...args: string[]) =>
            pulumiOk([...args, "--stack", stack], folder, env);
        const config = Object.entries(emulator.stackConfig).flatMap(([key, { value, secret }]) => [
          secret ? "--secret" : "--plaintext",
          `${key}=${value}`,
        ]);
        const started: number[] = [];
        await emulator.control("POST", "/reset");
        try {
          for (const stack of [a, b]) {
            await pulumiOk(["stack", "init", stack], folder, env);
            await on(stack)("config", "set-all", ...config);
          }
          if (entry.others === "before") await on(b)("up", "--yes", "--skip-preview");

          const hold = entry.kill === "beforeReceipt" ? { latencyMs: 300_000 } : { processingMs: 4_000 };
          await emulator.control("POST", "/faults", { route: ORGANIZATION_CREATE, times: 1, ...hold });
          const before = routeCount(await stats(emulator), ORGANIZATION_CREATE);
          const run = startCommand(
            "pulumi",
            ["up", "--yes", "--skip-preview", "--non-interactive", "--stack", a],
            folder,
            env,
            {
              detached: true,
            },
          );
          const pid = run.child.pid ?? 0;
          started.push(pid);
          await eventually(
            "a's organisation create to be held",
            () => stats(emulator),
            (c) => routeCount(c, ORGANIZATION_CREATE) > before,
          );
          // A runner torn down with its job: pulumi and every process it started.
          const tree = [pid, ...descendants(pid)];
          started.push(...tree);
          for (const member of tree) kill(member);
          expect((await run.done).code, "the killed pulumi up").not.toBe(0);

          if (entry.others === "during") await on(b)("up", "--yes", "--skip-preview");
          const [bOrganization] = (await on(b)("stack", "output", "organizationId")).stdout.trim().split("\n");
          const byHand = entry.byHand
            ? (await partnerClient(emulator).createOrganization({ name: NAME })).id
            : undefined;
          if (entry.kill === "afterCarriedOut") {
            await eventually(
              "a's held create to be carried out",
              () => stats(emulator),
              (c) => inFlight(c) === 0,
            );
          }
          await emulator.control("DELETE", "/faults");
          const madeByA = (await acmes()).filter((id) => id !== bOrganization && id !== byHand);
          expect(madeByA, "the organisations a's killed run made").toHaveLength(
            entry.kill === "afterCarriedOut" ? 1 : 0,
          );

          const recover = (...extra: string[]): Promise<CliResult> => {
            if (entry.face === "typescript") return dmarcRecover(["--stack", a, ...extra], folder, env);
            const executable = join(executableFolder, "pulumi-resource-dmarc");
            const [command, args] = entry.wrapped
              ? ["/usr/bin/timeout", ["300", executable, "recover", "--stack", a, ...extra]]
              : [executable, ["recover", "--stack", a, ...extra]];
            return startCommand(command as string, args as string[], folder, { ...env, PATH: pathWithoutNode(env) })
              .done;
          };
          let recovered = await recover();
          const said = `${recovered.stdout}\n${recovered.stderr}`;
          if (entry.byHand) {
            // Two organisations made during the run, neither recorded: the command cannot tell, and says so.
            expect(recovered.code, said).toBe(4);
            expect(said).toMatch(/^left\s+acme \(Organization\): 2 objects found could each be what the create made/m);
            for (const id of [madeByA[0], byHand]) expect(said).toContain(`found ${id} (${NAME}, created`);
            expect(said).toContain(`recorded by stack`);
            expect(said).toMatch(new RegExp(`--adopt '?urn:pulumi:${a}::\\S*::acme=${madeByA[0]}'?$`, "m"));
            const urn = new RegExp(`--drop '?(urn:pulumi:${a}::\\S*::acme)'?$`, "m").exec(said)?.[1] as string;
            expect(urn, "the --drop the command suggests").toBeDefined();
            recovered = await recover("--adopt", `${urn}=${madeByA[0]}`);
          }
          expect(recovered.code, `${recovered.stdout}\n${recovered.stderr}`).toBe(0);
          const settled = entry.kill === "beforeReceipt" ? "dropped" : "adopted";
          expect(recovered.stdout).toMatch(new RegExp(`^${settled}\\s+acme \\(Organization`, "m"));
          if (entry.kill === "afterCarriedOut") expect(recovered.stdout).toContain(`Organization ${madeByA[0]}`);
          expect(recovered.stdout).not.toContain(bOrganization as string);
          expect(processesIn(folder).filter(isRunning)).toEqual([]);

          await on(a)("up", "--yes", "--skip-preview");
          const aOrganization = (await on(a)("stack", "output", "organizationId")).stdout.trim();
          if (entry.kill === "afterCarriedOut") expect(aOrganization).toBe(madeByA[0]);
          expect([bOrganization, byHand]).not.toContain(aOrganization);
          const all = await acmes();
          expect(all.sort()).toEqual([aOrganization, bOrganization, ...(byHand ? [byHand] : [])].sort());
          for (const id of [aOrganization, bOrganization]) expect(await groupsOf(id as string)).toHaveLength(1);

          await on(a)("destroy", "--yes", "--skip-preview");
          expect((await acmes()).sort(), "after a's destroy").toEqual(
            [bOrganization, ...(byHand ? [byHand] : [])].sort(),
          );
          expect(await groupsOf(bOrganization as string)).toHaveLength(1);
          report("ownership", describeCase(entry), { settled: entry.byHand ? "left, then adopted" : settled });
        } finally {
          for (const survivor of [...started, ...processesIn(folder)].filter(isRunning)) kill(survivor);
          await emulator.control("DELETE", "/faults");
          for (const stack of [a, b]) {
            await pulumi(["destroy", "--yes", "--skip-preview", "--stack", stack], folder, env);
            await pulumi(["stack", "rm", "--yes", "--force", "--stack", stack], folder, env);
          }
        }
      },
      ENGINE_TIMEOUT,
    );
  }
});
