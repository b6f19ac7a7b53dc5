import { randomBytes } from "node:crypto";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { StateSnapshot } from "dmarc-partner-emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runProcess } from "../../scripts/build/process.mjs";
import { projectRoot } from "../../scripts/project.mjs";
import { generateSdks } from "../../scripts/sdk/index.mjs";
import { installPythonPackage } from "../../scripts/toolchains/python.mjs";
import { type EmulatorHandle, partnerClient, startTestEmulator } from "../support/emulator";
import { type PluginProject, type PreviewStep, pluginProject } from "../support/pluginProject";
import { serviceShape } from "../support/serviceShape";
import { tenantComponentProgram, typeScriptTenantShape } from "../support/typeScriptTenant";

// Python programs on the generated SDK (pulumi_dmarc, pip-installed into the
// project's virtual environment) through the engine, the project's Python
// language host and the provider plugin, against the emulator: one stack
// from nothing to a verified domain, no change, a rename in place, a bad
// input refused at preview, destroy; then the Tenant component leaving the
// service as the TypeScript Tenant does; and the program's unit tests on
// Pulumi's mocks, run by pytest.

const ENGINE_TIMEOUT = 300_000;

const fixtures = join(projectRoot, "test", "fixtures", "plugin");
const tenantProgram = join(fixtures, "python", "__main__.py");
const componentProgram = join(fixtures, "python-tenant", "__main__.py");
const PROJECT = "dmarc-python";

/** The customer test/plugin/tenant.test.ts declares in Pulumi YAML, whose webhook the Python one shares. */
const declared = tenantComponentProgram.resources.globex.properties as { webhooks: { url: string }[] };

const zoneKey = {
  name: "python-update",
  algorithm: "hmac-sha256" as const,
  secret: randomBytes(32).toString("base64"),
};

/** Each step of a preview that changes something, as "<op> <type>". */
function changes(steps: readonly PreviewStep[]): string[] {
  return steps
    .filter((step) => step.op !== "same")
    .map((step) => `${step.op} ${step.urn.split("::")[2]?.split("$").at(-1)}`);
}

describe("Python programs on the generated SDK, through the provider plugin", () => {
  let emulator: EmulatorHandle;
  let project: PluginProject;
  let work: string;
  let interpreter: string;

  const client = () => partnerClient(emulator);
  const emulatorState = () => emulator.control<StateSnapshot>("GET", "/state");
  /**
   * The requests that would change something on the service, so far: reads
   * and the sign-in of the price lookup (an invoke, which runs at preview) left out.
   */
  const writes = async () => {
    const { byRoute } = await emulator.control<{ byRoute: Record<string, number> }>("GET", "/stats");
    return Object.entries(byRoute).filter(([route]) => !route.startsWith("GET ") && route !== "POST /auth/token");
  };
  const useProgram = (program: string) => copyFileSync(program, join(project.folder, "__main__.py"));

  beforeAll(async () => {
    emulator = await startTestEmulator({ dns: { port: 0, checkIntervalMs: 250, tsigKey: zoneKey } });
    work = mkdtempSync(join(tmpdir(), "dmarc-python-"));
    const { python } = await generateSdks(join(work, "sdk"), ["python"]);
    interpreter = await installPythonPackage(python as string);
    project = await pluginProject(PROJECT, {
      ...emulator.stackConfig,
      [`${PROJECT}:organizationName`]: { value: " Acme Corp" },
      [`${PROJECT}:dnsServer`]: { value: emulator.emulator.dnsServer ?? "" },
      [`${PROJECT}:dnsKeyName`]: { value: zoneKey.name },
      [`${PROJECT}:dnsKeySecret`]: { value: zoneKey.secret, secret: true },
      // Loopback: the emulator delivers the webhook's events there.
      [`${PROJECT}:webhookUrl`]: { value: "http://127.0.0.1:9/acme" },
    });
    // The environment's folder, whose bin/python the interpreter is.
    project.write({ runtime: { name: "python", options: { virtualenv: dirname(dirname(interpreter)) } } });
    useProgram(tenantProgram);
  }, ENGINE_TIMEOUT);

  afterAll(async () => {
    await project?.remove();
    await emulator?.emulator.close();
    if (work) rmSync(work, { recursive: true, force: true });
  }, ENGINE_TIMEOUT);

  it(
    "refuses a bad input at preview in the field's words, before any change on the service",
    async () => {
      const before = await writes();
      const preview = await project.run(["preview"]);
      const output = `${preview.stdout}${preview.stderr}`;
      expect(preview.code, output).not.toBe(0);
      expect(output).toMatch(/dmarc:index:Organization \(acme\)/);
      expect(output).toContain('Organization input "name" must not start or end with white space; got " Acme Corp"');
      expect(await writes()).toEqual(before);
    },
    ENGINE_TIMEOUT,
  );

  it(
    "reaches a verified domain in one up, with a subscription by plan name, an invitation and a webhook",
    async () => {
      await project.ok(["config", "set", `${PROJECT}:organizationName`, "Acme Corp"]);
      await project.ok(["up", "--yes", "--skip-preview"]);
      const outputs = await project.outputs();
      expect(outputs).toMatchObject({ verified: true, subscription: "active" });
      expect(String(outputs.webhookSecret)).toMatch(/^whsec_/);
      expect((await client().listOrganizations()).map((organization) => organization.name)).toEqual(["Acme Corp"]);
      const domains = await client().listDomains(String(outputs.organizationId));
      expect(domains).toMatchObject([{ domain: "acme.example", domainVerified: true }]);
      const state = await emulatorState();
      expect(state.users.map((user) => user.email)).toContain("it@acme.example");
      expect(state.webhooks.map((webhook) => webhook.name)).toEqual(["Acme events"]);
    },
    ENGINE_TIMEOUT,
  );

  it(
    "keeps the webhook's secret a secret output, and every secret encrypted in the state",
    async () => {
      const shown = JSON.parse((await project.ok(["stack", "output", "--json"])).stdout);
      expect(shown.webhookSecret).toBe("[secret]");
      const { stdout: state } = await project.ok(["stack", "export"]);
      expect(state).not.toContain(String((await project.outputs()).webhookSecret));
      expect(state).not.toContain(zoneKey.secret);
      expect(state).not.toContain(emulator.partner.clientSecret);
    },
    ENGINE_TIMEOUT,
  );

  it(
    "previews no change, then the organisation's rename as one update in place, its dependants unchanged",
    async () => {
      await project.ok(["preview", "--expect-no-changes"]);
      const [before] = (await emulatorState()).organizations;
      await project.ok(["config", "set", `${PROJECT}:organizationName`, "Acme Corporation"]);
      expect(changes(await project.previewSteps())).toEqual(["update dmarc:index:Organization"]);
      const { stdout } = await project.ok(["up", "--yes", "--skip-preview"]);
      expect(stdout).toMatch(/~ 1 updated/);
      const after = (await emulatorState()).organizations;
      expect(after.map((organization) => [organization.id, organization.name])).toEqual([
        [before?.id, "Acme Corporation"],
      ]);
      await project.ok(["preview", "--expect-no-changes"]);
    },
    ENGINE_TIMEOUT,
  );

  it(
    "destroys everything it made",
    async () => {
      await project.ok(["destroy", "--yes", "--skip-preview"]);
      const left = await emulatorState();
      expect([left.organizations, left.domains, left.webhooks, left.subscriptions]).toEqual([[], [], [], []]);
      const stack = JSON.parse((await project.ok(["stack", "export"])).stdout);
      expect(stack.deployment.resources ?? []).toEqual([]);
    },
    ENGINE_TIMEOUT,
  );

  it(
    "reports a failing program once, with the exception and where it was raised",
    async () => {
      writeFileSync(join(project.folder, "__main__.py"), 'raise ValueError("boom from the program")\n');
      const preview = await project.run(["preview"]);
      const output = `${preview.stdout}${preview.stderr}`;
      expect(preview.code, output).not.toBe(0);
      expect(output).toMatch(/ValueError: boom from the program/);
      expect(output).toMatch(/__main__\.py", line 1/);
      // The runner exits 32 after showing the error; the host then adds no message of its own.
      expect(output).not.toContain("non-zero exit code");
    },
    ENGINE_TIMEOUT,
  );

  it(
    "declares a whole customer with dmarc.Tenant, leaving the service as the TypeScript Tenant does",
    async () => {
      await emulator.control("POST", "/reset");
      await project.ok(["config", "set", `${PROJECT}:webhookUrl`, declared.webhooks[0]?.url ?? ""]);
      useProgram(componentProgram);
      await project.ok(["up", "--yes", "--skip-preview"]);
      const outputs = await project.outputs();
      expect(outputs.subscriptionStatus).toBe("active");
      expect(Object.keys(outputs.records as object).sort()).toEqual(["globex-parked.example", "globex.example"]);
      const viaPython = await serviceShape(emulator);
      expect(JSON.stringify(viaPython)).toContain('"domainVerified":true');
      await project.ok(["preview", "--expect-no-changes"]);
      await project.ok(["destroy", "--yes", "--skip-preview"]);
      await emulator.control("POST", "/reset");

      expect(await typeScriptTenantShape(emulator, zoneKey)).toEqual(viaPython);
    },
    ENGINE_TIMEOUT,
  );

  it(
    "passes its unit tests on Pulumi's mocks, run by pytest",
    async () => {
      const output = await runProcess(interpreter, ["-m", "pytest", "-p", "no:cacheprovider", "-q", "."], {
        cwd: join(fixtures, "python"),
        env: {
          PYTHONDONTWRITEBYTECODE: "1",
        },
      });
      expect(output).toMatch(/^4 passed/m);
    },
    ENGINE_TIMEOUT,
  );

  it("are the programs docs/guides/languages.md shows", () => {
    const guide = readFileSync(join(projectRoot, "docs", "guides", "languages.md"), "utf8");
    const blocks = [...guide.matchAll(/```python\n([\s\S]*?)```/g)].map((match) => match[1]);
    expect(blocks).toContain(readFileSync(tenantProgram, "utf8"));
    expect(blocks).toContain(readFileSync(componentProgram, "utf8"));
  });
});
