import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { LocalWorkspace, type Stack } from "@pulumi/pulumi/automation";
import { createClient, type DmarcClient } from "pulumi-dmarc-partner/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectRoot } from "../../scripts/project.mjs";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { recordedProviders, uniqueStackName, useEngine } from "../support/engine";
import { installOnce } from "../support/installCache";

const packageVersion = (
  JSON.parse(readFileSync(join(projectRoot, "provider", "package.json"), "utf8")) as { version: string }
).version;

// The package as a partner gets it: the `npm pack` tarball of provider/,
// installed with npm into a fresh Pulumi project outside the repository next
// to the partner's own @pulumi/pulumi, and driven through the engine (the
// language host starts the program with the `node` first on PATH, and the
// dynamic provider resolves the package from the project's node_modules).
// Node.js 22 and newer get the newest @pulumi/pulumi the registry serves;
// Node.js 20 the last release that supports it. DMARC_PARTNER_SDK_VERSION
// names another version, e.g. the lower bound of the peer range. The install
// is npm's once per tarball and manifest (../support/installCache.ts): the
// other Node.js lines and later runs get a copy of it.

const NODE_20_SDK = "3.248.0";
const nodeLine = Number(process.versions.node.split(".")[0]);

function npm(args: string[], cwd: string): string {
  try {
    return execFileSync("npm", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 300_000 });
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`npm ${args.join(" ")} in ${cwd} failed: ${failed.message}\n${failed.stdout}\n${failed.stderr}`);
  }
}

function sdkVersion(): string {
  const chosen = process.env.DMARC_PARTNER_SDK_VERSION;
  if (chosen) return chosen;
  if (nodeLine < 22) return NODE_20_SDK;
  return npm(["view", "@pulumi/pulumi", "version"], tmpdir()).trim();
}

function rootDevDependency(name: string): string {
  const manifest = JSON.parse(readFileSync(join(projectRoot, "package.json"), "utf8"));
  const version = manifest.devDependencies?.[name];
  if (!version) throw new Error(`package.json has no devDependency ${name}`);
  return version;
}

/** Every installed copy of a package in a project, by path, nested copies included. */
function installedCopies(projectDir: string, name: string): { path: string; version: string }[] {
  const copies: { path: string; version: string }[] = [];
  const visit = (modulesDir: string): void => {
    let entries: string[];
    try {
      entries = readdirSync(modulesDir);
    } catch {
      return;
    }
    for (const entry of entries) {
      const packages = entry.startsWith("@")
        ? readdirSync(join(modulesDir, entry)).map((scoped) => join(modulesDir, entry, scoped))
        : entry.startsWith(".")
          ? []
          : [join(modulesDir, entry)];
      for (const dir of packages) {
        try {
          const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
          if (manifest.name === name) copies.push({ path: relative(projectDir, dir), version: manifest.version });
        } catch {}
        visit(join(dir, "node_modules"));
      }
    }
  };
  visit(join(projectDir, "node_modules"));
  return copies;
}

const program = `import * as pulumi from "@pulumi/pulumi";
import * as dmarc from "pulumi-dmarc-partner";

const config = new pulumi.Config();
const groupName = config.require("groupName");

export const tenants = ["alpha", "beta"].map((tenant) => {
  const org = new dmarc.Organization(tenant, { name: \`\${tenant} customer\` });
  const group = new dmarc.DomainGroup(\`\${tenant}-main\`, { organizationId: org.organizationId, name: groupName });
  const domain = new dmarc.Domain(\`\${tenant}.example\`, {
    organizationId: org.organizationId,
    domain: \`\${tenant}.example\`,
    groupId: group.groupId,
  });
  const plan = new dmarc.Subscription(\`\${tenant}-plan\`, {
    organizationId: org.organizationId,
    priceId: dmarc.getPriceId({ plan: "Starter", frequency: "monthly" }),
  });
  return {
    organizationId: org.organizationId,
    groupId: group.groupId,
    record: domain.setupRecord.name,
    subscriptionStatus: plan.status,
  };
});
`;

interface TenantOutput {
  organizationId: string;
  groupId: string;
  record: string;
  subscriptionStatus: string;
}

describe(`the packed package in a partner's project on Node.js ${process.versions.node}`, () => {
  const sdk = sdkVersion();
  let handle: EmulatorHandle;
  let client: DmarcClient;
  let projectDir: string;
  let stack: Stack;
  let destroyed = false;

  beforeAll(async () => {
    handle = await startTestEmulator();
    client = createClient({
      baseUrl: handle.emulator.url,
      clientId: handle.partner.clientId,
      clientSecret: handle.partner.clientSecret,
    });
    const engineEnv = await useEngine();

    projectDir = mkdtempSync(join(tmpdir(), "dmarc-partner-project-"));
    const tarballs = join(projectDir, "tarballs");
    mkdirSync(tarballs);
    const [packed] = JSON.parse(
      npm(["pack", "--json", "--ignore-scripts", "--pack-destination", tarballs], join(projectRoot, "provider")),
    ) as { filename: string }[];
    if (!packed) throw new Error("npm pack printed no tarball");

    writeFileSync(
      join(projectDir, "package.json"),
      `${JSON.stringify(
        {
          name: "partner-tenants",
          private: true,
          main: "index.ts",
          dependencies: {
            "@pulumi/pulumi": sdk,
            "pulumi-dmarc-partner": `file:tarballs/${packed.filename}`,
          },
          devDependencies: {
            "@types/node": rootDevDependency("@types/node"),
            typescript: rootDevDependency("typescript"),
          },
        },
        null,
        2,
      )}\n`,
    );
    writeFileSync(
      join(projectDir, "tsconfig.json"),
      `${JSON.stringify(
        {
          compilerOptions: {
            strict: true,
            target: "ES2022",
            module: "commonjs",
            moduleResolution: "node10",
            esModuleInterop: true,
            skipLibCheck: true,
          },
          files: ["index.ts"],
        },
        null,
        2,
      )}\n`,
    );
    writeFileSync(join(projectDir, "Pulumi.yaml"), "name: partner-tenants\nruntime: nodejs\n");
    writeFileSync(join(projectDir, "index.ts"), program);
    await installOnce(projectDir, join(tarballs, packed.filename), (folder) =>
      npm(["install", "--prefer-offline", "--no-audit", "--no-fund"], folder),
    );

    stack = await LocalWorkspace.createStack(
      { stackName: uniqueStackName("partner"), workDir: projectDir },
      { envVars: engineEnv },
    );
    await stack.setAllConfig({ ...handle.stackConfig, "partner-tenants:groupName": { value: "Main" } });
  }, 600_000);

  afterAll(async () => {
    if (stack && !destroyed) await stack.destroy().catch(() => undefined);
    if (stack) await stack.workspace.removeStack(stack.name, { force: true }).catch(() => undefined);
    if (projectDir) rmSync(projectDir, { recursive: true, force: true });
    await handle?.emulator.close();
  });

  it(`installs exactly one @pulumi/pulumi, the project's ${sdk}`, () => {
    expect(installedCopies(projectDir, "@pulumi/pulumi")).toEqual([
      { path: "node_modules/@pulumi/pulumi", version: sdk },
    ]);
    expect(installedCopies(projectDir, "pulumi-dmarc-partner")).toEqual([
      { path: "node_modules/pulumi-dmarc-partner", version: packageVersion },
    ]);
  });

  it("runs up, a no-change preview, an in-place change, refresh and destroy of two tenants", async () => {
    const up = await stack.up();
    expect(up.summary.result).toBe("succeeded");
    expect(up.summary.resourceChanges).toEqual({ create: 9 });
    const tenants = up.outputs.tenants?.value as TenantOutput[];
    expect(tenants.map((tenant) => tenant.record)).toEqual(["_dmarc", "_dmarc"]);
    expect(tenants.map((tenant) => tenant.subscriptionStatus)).toEqual(["active", "active"]);

    // The installed package records the same short provider text as a linked checkout (test/resources/engine.test.ts).
    const deployment = (await stack.exportStack()).deployment as { resources: Parameters<typeof recordedProviders>[0] };
    for (const [type, text] of recordedProviders(deployment.resources)) {
      expect(text, type).toMatch(/^exports\.handler=\(\)=>require\("pulumi-dmarc-partner\/providers\/[a-zA-Z]+"\);$/);
    }
    // Each resource records the program's line that declared it, mapped back to the TypeScript source.
    const positions = (deployment.resources as { type: string; sourcePosition?: string }[])
      .filter((resource) => resource.type.includes(":dynamic/dmarc:"))
      .map((resource) => resource.sourcePosition);
    expect(positions).toHaveLength(8);
    for (const position of positions) expect(position).toMatch(/^project:\/\/\/index\.ts#\d+,\d+$/);

    const preview = await stack.preview();
    expect(preview.changeSummary).toEqual({ same: 9 });

    await stack.setConfig("partner-tenants:groupName", { value: "Primary" });
    const change = await stack.up();
    expect(change.summary.resourceChanges).toEqual({ same: 7, update: 2 });
    for (const tenant of tenants) {
      const group = await client.getDomainGroup(tenant.organizationId, tenant.groupId);
      expect(group?.name).toBe("Primary");
    }

    const refresh = await stack.refresh();
    expect(refresh.summary.result).toBe("succeeded");
    expect(refresh.summary.resourceChanges).toEqual({ same: 9 });

    const destroy = await stack.destroy();
    destroyed = true;
    // Nothing in this program warrants a warning: any would be the engine's or the package's.
    const output = [up, preview, change, refresh, destroy].flatMap((result) =>
      `${result.stdout}\n${result.stderr}`.split("\n"),
    );
    expect(output.filter((text) => /\bwarn(ing)?\b/i.test(text))).toEqual([]);
    expect(destroy.summary.resourceChanges).toEqual({ delete: 9 });
    const remaining = await client.listOrganizations();
    expect(remaining.filter((org) => tenants.some((tenant) => tenant.organizationId === org.id))).toEqual([]);
  }, 600_000);

  it("runs dmarc-fleet preview from the tarball: the plan per tenant as a pull-request comment, exit 3 for changes", async () => {
    const env = { ...process.env, ...(await useEngine()) };
    writeFileSync(
      join(projectDir, "tenants.yaml"),
      [
        "defaults: { group: Main, plan: Starter }",
        "tenants:",
        "  - { name: Gamma Ltd, domains: [{ name: gamma.example }] }",
        "  - { name: Delta Ltd, domains: [{ name: delta.example }] }",
        "",
      ].join("\n"),
    );
    const fleet = uniqueStackName("tarball-fleet");
    const common = ["--config-stack", stack.name, "--fleet", fleet, "--concurrency", "1"];
    // Not spawnSync: the emulator answers from this process, whose event loop must keep running.
    const fleetCommand = (args: string[]) =>
      new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
        const child = spawn("npx", ["--no", "dmarc-fleet", ...args, ...common], {
          cwd: projectDir,
          env,
          signal: AbortSignal.timeout(300_000),
        });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (chunk: Buffer) => {
          stdout += chunk.toString();
        });
        child.stderr.on("data", (chunk: Buffer) => {
          stderr += chunk.toString();
        });
        child.on("error", reject);
        child.on("close", (status) => resolve({ status, stdout, stderr }));
      });
    try {
      const preview = await fleetCommand(["preview", "--markdown", "plan.md", "--detailed-exitcode"]);
      expect(preview.status, preview.stderr).toBe(3);
      expect(preview.stdout).toMatch(/gamma-ltd \(tarball-fleet-[^)]+-001\): new, 4 created/);
      const comment = readFileSync(join(projectDir, "plan.md"), "utf8");
      expect(comment).toMatch(/^### dmarc-fleet preview: fleet `tarball-fleet-/);
      expect(comment).toContain("| gamma-ltd | ");
      expect(comment).toContain("<details><summary><b>delta-ltd</b>");
    } finally {
      await fleetCommand(["destroy"]);
    }
  }, 600_000);
});
