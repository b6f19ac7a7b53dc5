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
// domain, every call to the service through the proxy's tunnel, the
// service's certificate signed by the company's CA (NODE_EXTRA_CA_CERTS),
// the record published straight to the DNS server.

const ENGINE_TIMEOUT = 300_000;

const tenantProgram = parse(readFileSync(join(projectRoot, "test", "fixtures", "plugin", "tenant.yaml"), "utf8"));

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
        "dmarc-proxy-yaml:organizationName": { value: "Proxied Corp" },
        "dmarc-proxy-yaml:dnsServer": { value: network.dnsServer },
        "dmarc-proxy-yaml:dnsKeyName": { value: network.dnsKey.name },
        "dmarc-proxy-yaml:dnsKeySecret": { value: network.dnsKey.secret, secret: true },
      },
      network.runnerEnv(engine.PATH ?? process.env.PATH ?? ""),
    );
  }, ENGINE_TIMEOUT);

  afterAll(async () => {
    await project?.remove();
    await network?.close();
  }, ENGINE_TIMEOUT);

  it(
    "reaches a verified domain in one up, every call through the proxy",
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
    "keeps the proxy's password out of the state and the output",
    async () => {
      const { stdout } = await project.ok(["stack", "export"]);
      expect(stdout).not.toContain(PROXY_USER.password);
      expect(upOutput).not.toContain(PROXY_USER.password);
      expect(upOutput).not.toBe("");
    },
    ENGINE_TIMEOUT,
  );

  it(
    "destroys through the proxy too, leaving nothing behind",
    async () => {
      await project.ok(["destroy", "--yes", "--skip-preview"]);
      const { stdout } = await project.ok(["stack", "export"]);
      expect(JSON.parse(stdout).deployment.resources ?? []).toEqual([]);
    },
    ENGINE_TIMEOUT,
  );
});
