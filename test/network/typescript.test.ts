import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { projectRoot } from "../../scripts/project.mjs";
import { FULL, pulumi, pulumiOk } from "../reliability/harness";
import { uniqueStackName, useEngine } from "../support/engine";
import { PROXY_USER, type ProxyNetwork, SERVICE_HOST, startProxyNetwork } from "../support/proxyNetwork";

// A TypeScript program on the dynamic resources, run by a pipeline whose
// only way out is the company's proxy (test/support/proxyNetwork.ts): the
// engine's dynamic provider, started by `pulumi` with its environment,
// calls the service through the proxy's tunnel, and the domain is verified
// once the record is published straight to the DNS server; the company's
// CA is the stack's dmarc:caFile, since the runner's system store is not
// read by every Node.js line the resources run on. In
// `npm run test:reliability`; `npm test` runs its faster sibling, the YAML
// program on the plugin (yaml.test.ts), through the same client.

const ENGINE_TIMEOUT = 300_000;

/** The program as a partner writes it, in plain JavaScript so the language host runs it as it is. */
const PROGRAM = `const pulumi = require("@pulumi/pulumi");
const dmarc = require("pulumi-dmarc-partner");
const config = new pulumi.Config();

const org = new dmarc.Organization("proxied", { name: "Proxied Ltd" });
const group = new dmarc.DomainGroup("main", { organizationId: org.organizationId, name: "Main" });
const domain = new dmarc.Domain("proxied.example", {
  organizationId: org.organizationId,
  domain: "proxied.example",
  groupId: group.groupId,
});
const record = new dmarc.Rfc2136Record("record", {
  server: config.require("dnsServer"),
  keyName: config.require("dnsKeyName"),
  keySecret: config.requireSecret("dnsKeySecret"),
  name: domain.setupRecord.host,
  type: domain.setupRecord.recordType,
  value: domain.setupRecord.value,
});
const verified = new dmarc.DomainVerification("verified", {
  domainId: domain.id,
  recordValue: record.value,
  pollInterval: "1s",
});
exports.verified = verified.verified;
`;

describe.skipIf(!FULL)("a TypeScript program behind the company's proxy", () => {
  let network: ProxyNetwork;
  let folder: string;
  let env: Record<string, string>;
  const stack = uniqueStackName("proxied");
  const cli = (...args: string[]) => pulumiOk([...args, "--stack", stack], folder, env);

  beforeAll(async () => {
    network = await startProxyNetwork();
    const engine = await useEngine();
    env = { ...engine, ...network.runnerEnv(engine.PATH ?? process.env.PATH ?? "") };
    folder = join(projectRoot, ".cache", "projects", uniqueStackName("dmarc-proxy-ts"));
    mkdirSync(folder, { recursive: true });
    symlinkSync(join(projectRoot, "node_modules"), join(folder, "node_modules"), "dir");
    writeFileSync(join(folder, "Pulumi.yaml"), stringify({ name: "dmarc-proxy-ts", runtime: "nodejs" }));
    writeFileSync(join(folder, "index.js"), PROGRAM);
    await pulumiOk(["stack", "init", stack], folder, env);
    await cli(
      "config",
      "set-all",
      "--plaintext",
      `dmarc:baseUrl=${network.serviceUrlByName}`,
      "--plaintext",
      `dmarc:clientId=${network.partner.clientId}`,
      "--secret",
      `dmarc:clientSecret=${network.partner.clientSecret}`,
      // Node.js 20 reads no system store: the stack names the company's CA itself.
      "--plaintext",
      `dmarc:caFile=${network.caFile}`,
      "--plaintext",
      `dnsServer=${network.dnsServer}`,
      "--plaintext",
      `dnsKeyName=${network.dnsKey.name}`,
      "--secret",
      `dnsKeySecret=${network.dnsKey.secret}`,
    );
  }, ENGINE_TIMEOUT);

  afterAll(async () => {
    if (folder) {
      await pulumi(["destroy", "--yes", "--skip-preview", "--stack", stack], folder, env);
      await pulumi(["stack", "rm", "--yes", "--force", "--stack", stack], folder, env);
      rmSync(folder, { recursive: true, force: true });
    }
    await network?.close();
  }, ENGINE_TIMEOUT);

  it(
    "reaches a verified domain in one up, every call through the proxy, its password nowhere",
    async () => {
      const before = network.connects().length;
      const up = await cli("up", "--yes", "--skip-preview");
      const { stdout } = await cli("stack", "output", "verified");
      expect(stdout.trim()).toBe("true");
      const tunnels = network.connects().slice(before);
      expect(tunnels.length).toBeGreaterThan(0);
      expect(new Set(tunnels)).toEqual(new Set([`${SERVICE_HOST}:8443`]));
      const state = (await cli("stack", "export")).stdout;
      for (const text of [up.stdout, up.stderr, state]) expect(text).not.toContain(PROXY_USER.password);
    },
    ENGINE_TIMEOUT,
  );
});
