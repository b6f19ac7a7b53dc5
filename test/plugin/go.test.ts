import { randomBytes } from "node:crypto";
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runProcess } from "../../scripts/build/process.mjs";
import { projectRoot } from "../../scripts/project.mjs";
import { type EmulatorHandle, partnerClient, startTestEmulator } from "../support/emulator";
import { type PluginProject, pluginProject } from "../support/pluginProject";
import { writeGoModuleOnSdk } from "../support/sdkTools";
import { serviceShape } from "../support/serviceShape";
import { typeScriptTenantShape } from "../support/typeScriptTenant";

// Go programs on the SDK generated from the plugin's schema, built and run
// through the engine by its Go language host (this project's own here:
// scripts/engine/language-host/golang), against the emulator, in one stack: a tenant
// from nothing to a verified domain in one `up`, no change, a rename
// previewed as one update, a bad input and a broken build refused at
// preview, destroy; then the Tenant component, leaving the service as the
// TypeScript Tenant does.

const ENGINE_TIMEOUT = 600_000;
/** The first build of a program on sdk/v3 on a machine compiles it and gRPC: over 5 minutes on two busy cores. */
const FIRST_BUILD_TIMEOUT = 900_000;

const programs = join(projectRoot, "test", "fixtures", "plugin", "go");

const zoneKey = {
  name: "go-update",
  algorithm: "hmac-sha256" as const,
  secret: randomBytes(32).toString("base64"),
};

describe("Go programs through the provider plugin", () => {
  let emulator: EmulatorHandle;
  let project: PluginProject;

  beforeAll(async () => {
    emulator = await startTestEmulator({ dns: { port: 0, checkIntervalMs: 250, tsigKey: zoneKey } });
    project = await pluginProject("dmarc-go", {
      ...emulator.stackConfig,
      "dmarc-go:organizationName": { value: "Acme Corp" },
      "dmarc-go:webhookName": { value: "Acme events" },
      "dmarc-go:dnsServer": { value: emulator.emulator.dnsServer ?? "" },
      "dmarc-go:dnsKeyName": { value: zoneKey.name },
      "dmarc-go:dnsKeySecret": { value: zoneKey.secret, secret: true },
    });
    // The programs' module, on the SDK's module as a partner's is on the published one.
    cpSync(programs, project.folder, { recursive: true });
    writeGoModuleOnSdk(project.folder, "dmarc-go-programs");
    await runProcess("go", ["mod", "tidy"], { cwd: project.folder, env: { GOTOOLCHAIN: "local" } });
  }, ENGINE_TIMEOUT);

  afterAll(async () => {
    await project?.remove();
    await emulator?.emulator.close();
  }, ENGINE_TIMEOUT);

  const client = () => partnerClient(emulator);

  /** Runs the program in `folder`; `go build` leaves it in bin/, linked again only when it changes. */
  const useProgram = (folder: string) =>
    project.write({ main: folder, runtime: { name: "go", options: { buildTarget: "bin/program" } } });

  it(
    "reaches a verified domain in one up, with a subscription by plan name, an invitation and a secret webhook",
    async () => {
      useProgram("acme");
      await project.ok(["up", "--yes", "--skip-preview"]);
      const outputs = await project.outputs();
      expect(outputs).toMatchObject({ verified: true, subscription: "active" });
      expect(String(outputs.webhookSecret)).toMatch(/^whsec_/);
      const shown = JSON.parse((await project.ok(["stack", "output", "--json"])).stdout);
      expect(shown.webhookSecret).toBe("[secret]");
      const { stdout: state } = await project.ok(["stack", "export"]);
      for (const secret of [String(outputs.webhookSecret), zoneKey.secret, emulator.partner.clientSecret])
        expect(state).not.toContain(secret);

      const [organization, ...others] = await client().listOrganizations();
      expect(others).toEqual([]);
      expect(organization?.name).toBe("Acme Corp");
      const organizationId = String(outputs.organizationId);
      expect(await client().listDomains(organizationId)).toMatchObject([
        { domain: "acme.example", domainVerified: true },
      ]);
      const service = JSON.stringify(await serviceShape(emulator));
      expect(service).toContain("it@acme.example");
      expect(service).toContain("Acme events");
    },
    FIRST_BUILD_TIMEOUT,
  );

  it(
    "previews no change, then the organisation's rename as one update in place, its dependants unchanged",
    async () => {
      await project.ok(["preview", "--expect-no-changes"]);
      const [before] = await client().listOrganizations();
      await project.ok(["config", "set", "dmarc-go:organizationName", "Acme Corporation"]);
      const changes = (await project.previewSteps()).filter((step) => step.op !== "same");
      expect(changes.map(({ op, urn }) => `${op} ${urn.slice(urn.lastIndexOf("::") + 2)}`)).toEqual(["update acme"]);

      const { stdout } = await project.ok(["up", "--yes", "--skip-preview"]);
      expect(stdout).toMatch(/~ 1 updated/);
      expect(await client().listOrganizations()).toMatchObject([{ id: before?.id, name: "Acme Corporation" }]);
      await project.ok(["preview", "--expect-no-changes"]);
    },
    ENGINE_TIMEOUT,
  );

  it(
    "refuses a bad input at preview naming the resource, the field, the value and what is allowed",
    async () => {
      await project.ok(["config", "set", "dmarc-go:organizationName", " Acme"]);
      const preview = await project.run(["preview"]);
      const output = `${preview.stdout}${preview.stderr}`;
      expect(preview.code, output).not.toBe(0);
      expect(output).toContain("dmarc:index:Organization (acme)");
      expect(output).toContain('Organization input "name" must not start or end with white space; got " Acme"');
      expect((await client().listOrganizations()).map((organization) => organization.name)).toEqual([
        "Acme Corporation",
      ]);
      await project.ok(["config", "set", "dmarc-go:organizationName", "Acme Corporation"]);
    },
    ENGINE_TIMEOUT,
  );

  it(
    "shows a program that does not build in the compiler's words, and a program's own error once",
    async () => {
      const source = join(project.folder, "broken", "main.go");
      mkdirSync(join(project.folder, "broken"), { recursive: true });
      writeFileSync(source, 'package main\n\nfunc main() {\n\tundeclaredTenant("acme")\n}\n');
      useProgram("broken");
      const unbuilt = await project.run(["preview"]);
      const compiler = `${unbuilt.stdout}${unbuilt.stderr}`;
      expect(unbuilt.code, compiler).not.toBe(0);
      expect(compiler).toMatch(/go build in .*broken failed/);
      expect(compiler).toMatch(/main\.go:4:2: undefined: undeclaredTenant/);

      writeFileSync(
        source,
        [
          "package main",
          'import ("errors"; "github.com/pulumi/pulumi/sdk/v3/go/pulumi")',
          'func main() { pulumi.Run(func(*pulumi.Context) error { return errors.New("no tenant today") }) }',
          "",
        ].join("\n"),
      );
      const failed = await project.run(["preview"]);
      const program = `${failed.stdout}${failed.stderr}`;
      expect(failed.code, program).not.toBe(0);
      expect(program.match(/no tenant today/g)).toHaveLength(1);
      // The SDK exits 32 once it has reported the error; the host then adds none of its own.
      expect(program).not.toMatch(/non-zero exit code/);
    },
    ENGINE_TIMEOUT,
  );

  it(
    "destroys everything, leaving nothing on the service",
    async () => {
      useProgram("acme");
      await project.ok(["destroy", "--yes", "--skip-preview"]);
      expect(await client().listOrganizations()).toEqual([]);
      expect(await client().listWebhooks(emulator.partner.id)).toEqual([]);
      const state = JSON.parse((await project.ok(["stack", "export"])).stdout);
      expect(state.deployment.resources ?? []).toEqual([]);
    },
    ENGINE_TIMEOUT,
  );

  it(
    "declares a whole customer with the Tenant component, leaving the service as the TypeScript Tenant does",
    async () => {
      await emulator.control("POST", "/reset");
      useProgram("globex");
      const { stdout } = await project.ok(["up", "--yes", "--skip-preview"]);
      expect(stdout).toMatch(/dmarc:index:DomainVerification/);
      const outputs = await project.outputs();
      expect(outputs.subscriptionStatus).toBe("active");
      expect(Object.keys(outputs.records as object).sort()).toEqual(["globex-parked.example", "globex.example"]);
      const viaGo = await serviceShape(emulator);
      expect(JSON.stringify(viaGo)).toContain('"domainVerified":true');
      await project.ok(["destroy", "--yes", "--skip-preview"]);
      expect(await client().listOrganizations()).toEqual([]);
      await emulator.control("POST", "/reset");

      expect(await typeScriptTenantShape(emulator, zoneKey)).toEqual(viaGo);
    },
    ENGINE_TIMEOUT,
  );

  it("is the program docs/guides/languages.md shows, from its package clause on", () => {
    const guide = readFileSync(join(projectRoot, "docs", "guides", "languages.md"), "utf8");
    for (const program of ["acme", "globex"]) {
      const text = readFileSync(join(programs, program, "main.go"), "utf8");
      expect(guide).toContain(text.slice(text.indexOf("package main")));
    }
  });
});
