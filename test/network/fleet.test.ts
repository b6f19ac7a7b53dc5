import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { LocalWorkspace } from "@pulumi/pulumi/automation";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { projectRoot } from "../../scripts/project.mjs";
import { fleetBackendUrl, fleetProjectFolder, tenant, uniqueFleetName } from "../fleet/support";
import { type CliResult, FULL, startCommand } from "../reliability/harness";
import { useEngine } from "../support/engine";
import { PROXY_USER, type ProxyNetwork, SERVICE_HOST, startProxyNetwork } from "../support/proxyNetwork";

// `dmarc-fleet up` of three tenants, run by a pipeline whose only way out
// is the company's proxy (test/support/proxyNetwork.ts): the runner's own
// calls (the plans, the catalogue) and every shard's provider go through
// the proxy's tunnel, the records straight to the DNS server, and the up
// ends with every domain verified. It runs in `npm run test:reliability`:
// its faster siblings in `npm test` are the YAML and TypeScript programs
// beside it, whose providers' client is the one the fleet's shards use.

const FLEET_TIMEOUT = 600_000;
const SECRET_ENV = "DMARC_TEST_PROXY_FLEET_DNS_KEY_SECRET";
const CLI = join(projectRoot, "provider", "bin", "dmarc-fleet.js");

describe.skipIf(!FULL)("a fleet behind the company's proxy", () => {
  let network: ProxyNetwork;
  let project: string;
  let env: Record<string, string>;
  const fleet = uniqueFleetName("proxied");
  const configStack = `${fleet}-config`;

  /** `dmarc-fleet` in the runner's namespace, as the pipeline runs it. */
  function fleetCli(...args: string[]): Promise<CliResult> {
    const argv = [CLI, ...args, "--cwd", project, "--config-stack", configStack, "--fleet", fleet];
    const [command, wrapped] = network.inRunner(process.execPath, argv);
    return startCommand(command, wrapped, project, env).done;
  }

  beforeAll(async () => {
    network = await startProxyNetwork();
    const engine = await useEngine();
    const { HTTPS_PROXY, NO_PROXY } = network.runnerEnv(engine.PATH ?? "");
    const NODE_EXTRA_CA_CERTS = network.caFile;
    const backend = { PULUMI_BACKEND_URL: fleetBackendUrl(fleet) };
    env = {
      ...engine,
      ...backend,
      HTTPS_PROXY,
      NO_PROXY,
      NODE_EXTRA_CA_CERTS,
      [SECRET_ENV]: network.dnsKey.secret,
    } as Record<string, string>;
    project = fleetProjectFolder(`dmarc-proxy-fleet-${fleet}`);
    const rfc2136 = { server: network.dnsServer, keyName: network.dnsKey.name, keySecretEnv: SECRET_ENV };
    writeFileSync(
      join(project, "tenants.yaml"),
      stringify({
        defaults: { dns: { rfc2136 } },
        tenants: ["alpha", "bravo", "charlie"].map((key) =>
          tenant(key, { domains: [{ name: `${key}.proxied.example`, verify: true }] }),
        ),
      }),
    );
    const workspace = await LocalWorkspace.create({
      workDir: project,
      envVars: { ...engine, ...backend },
      projectSettings: { name: "dmarc-proxy-fleet", runtime: "nodejs" },
    });
    await workspace.createStack(configStack);
    await workspace.setAllConfig(configStack, {
      "dmarc:baseUrl": { value: network.serviceUrlByName },
      "dmarc:clientId": { value: network.partner.clientId },
      "dmarc:clientSecret": { value: network.partner.clientSecret, secret: true },
      "dmarc:partnerId": { value: network.partner.id },
    });
  }, FLEET_TIMEOUT);

  afterAll(async () => {
    try {
      if (project) await fleetCli("destroy");
    } finally {
      await network?.close();
    }
  }, FLEET_TIMEOUT);

  it(
    "ends its up with every domain verified, every call to the service through the proxy",
    async () => {
      const before = network.connects().length;
      const up = await fleetCli("up", "--json");
      expect(up.code, up.stderr).toBe(0);
      const { results } = JSON.parse(up.stdout) as { results: { status: string }[] };
      expect(results.map((result) => result.status)).toEqual(["done"]);
      const tunnels = network.connects().slice(before);
      expect(tunnels.length).toBeGreaterThan(0);
      expect(new Set(tunnels)).toEqual(new Set([`${SERVICE_HOST}:8443`]));
      expect(up.stdout + up.stderr).not.toContain(PROXY_USER.password);

      const status = await fleetCli("status", "--json");
      expect(status.code, status.stderr).toBe(0);
      expect(JSON.parse(status.stdout).shards).toMatchObject([{ upToDate: true }]);
    },
    FLEET_TIMEOUT,
  );
});
