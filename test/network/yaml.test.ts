import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { projectRoot } from "../../scripts/project.mjs";
import { useEngine } from "../support/engine";
import { type PluginProject, pluginProject } from "../support/pluginProject";
import { PROXY_USER, type ProxyNetwork, SERVICE_HOST, startProxyNetwork } from "../support/proxyNetwork";

// A Pulumi YAML program on the plugin's executable, run by a pipeline whose
// only way out is the company's proxy (test/support/proxyNetwork.ts): the
// same tenant as test/plugin/yaml.test.ts, from nothing to a verified
// domain, every call to the service through the proxy's tunnel, the record
// published straight to the DNS server. The proxy is the stack's secret
// dmarc:httpsProxy, and the service's certificate is signed by the
// company's CA, which only the runner's system store holds: the executable
// (Node.js of the release's line) trusts it with no variable set, as the
// Pulumi CLI does. Then the proxy's password is rotated.

const ENGINE_TIMEOUT = 300_000;
const ROTATED_PASSWORD = "R0tated-pass-2468";

const tenantProgram = parse(readFileSync(join(projectRoot, "test", "fixtures", "plugin", "tenant.yaml"), "utf8"));

/** The default provider's inputs in an exported state. */
function providerInputs(exported: string): Record<string, unknown> | undefined {
  const resources = (JSON.parse(exported).deployment.resources ?? []) as Array<{ type: string; inputs?: object }>;
  return resources.find((resource) => resource.type === "pulumi:providers:dmarc")?.inputs as Record<string, unknown>;
}

describe("a YAML program behind the company's proxy", () => {
  let network: ProxyNetwork;
  let project: PluginProject;
  let upOutput = "";

  beforeAll(async () => {
    network = await startProxyNetwork();
    const engine = await useEngine();
    project = await pluginProject(
      "dmarc-proxy-yaml",
      {
        "dmarc:baseUrl": { value: network.serviceUrlByName },
        "dmarc:clientId": { value: network.partner.clientId },
        "dmarc:clientSecret": { value: network.partner.clientSecret, secret: true },
        "dmarc:partnerId": { value: network.partner.id },
        "dmarc:httpsProxy": { value: network.proxyForRunner, secret: true },
        "dmarc-proxy-yaml:organizationName": { value: "Proxied Corp" },
        "dmarc-proxy-yaml:dnsServer": { value: network.dnsServer },
        "dmarc-proxy-yaml:dnsKeyName": { value: network.dnsKey.name },
        "dmarc-proxy-yaml:dnsKeySecret": { value: network.dnsKey.secret, secret: true },
      },
      // The stack's setting alone names the proxy.
      { ...network.runnerEnv(engine.PATH ?? process.env.PATH ?? ""), HTTPS_PROXY: "" },
    );
  }, ENGINE_TIMEOUT);

  afterAll(async () => {
    await project?.remove();
    await network?.close();
  }, ENGINE_TIMEOUT);

  it(
    "reaches a verified domain in one up, every call through the proxy, the company's CA trusted from the system store",
    async () => {
      project.write(tenantProgram);
      const before = network.connects().length;
      const up = await project.ok(["up", "--yes", "--skip-preview"]);
      upOutput = up.stdout + up.stderr;
      expect(await project.outputs()).toMatchObject({ verified: true, subscription: "active" });
      const tunnels = network.connects().slice(before);
      expect(tunnels.length).toBeGreaterThan(0);
      expect(new Set(tunnels)).toEqual(new Set([`${SERVICE_HOST}:8443`]));
    },
    ENGINE_TIMEOUT,
  );

  it(
    "keeps dmarc:httpsProxy a secret: the password in no state, output or error",
    async () => {
      const { stdout } = await project.ok(["stack", "export"]);
      expect(stdout).not.toContain(PROXY_USER.password);
      expect(providerInputs(stdout)?.httpsProxy).toMatchObject({ ciphertext: expect.any(String) });
      expect(upOutput).not.toContain(PROXY_USER.password);
      expect(upOutput).not.toBe("");
    },
    ENGINE_TIMEOUT,
  );

  it(
    "after the proxy's password is rotated, refreshes and destroys with --run-program, the last up's password refused and named",
    async () => {
      const rotated = await network.rotateProxyPassword(ROTATED_PASSWORD);
      await project.ok(["config", "set", "--secret", "dmarc:httpsProxy", rotated]);
      // Without the program, refresh configures the provider with the last up's settings: the old password.
      const stale = await project.run(["refresh", "--yes", "--skip-preview"]);
      const staleOutput = stale.stdout + stale.stderr;
      expect(stale.code).not.toBe(0);
      expect(staleOutput).toMatch(/the proxy http:\/\/\*\*\*@10\.254\.\d+\.5:3128 \(chosen by httpsProxy/);
      expect(staleOutput).toMatch(/asks for credentials \(40[17] /);
      expect(staleOutput).toMatch(/--run-program/);
      const refreshed = await project.ok(["refresh", "--yes", "--skip-preview", "--run-program"]);
      await project.ok(["destroy", "--yes", "--skip-preview", "--run-program"]);
      const { stdout } = await project.ok(["stack", "export"]);
      expect(JSON.parse(stdout).deployment.resources ?? []).toEqual([]);
      for (const text of [staleOutput, refreshed.stdout, refreshed.stderr, stdout]) {
        expect(text).not.toContain(PROXY_USER.password);
        expect(text).not.toContain(ROTATED_PASSWORD);
      }
    },
    ENGINE_TIMEOUT,
  );
});
