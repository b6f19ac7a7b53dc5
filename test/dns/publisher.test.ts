import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LocalWorkspace } from "@pulumi/pulumi/automation";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { projectRoot } from "../../scripts/project.mjs";
import { backendFolder, fleetBackendUrl, fleetProjectFolder, tenant, uniqueFleetName } from "../fleet/support";
import { type CliResult, startCommand } from "../reliability/harness";
import { dnsServersUnavailable, type RunningDnsServer, startDnsServer, ZONE } from "../support/dnsServers";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { useEngine } from "../support/engine";

// `dns: { publisher: ./publish.js }`: a partner's own module beside the
// inventory, exporting publishRecord (here one that publishes through the
// package's Rfc2136Record with a TTL of its own, standing for a DNS
// provider's Pulumi package, which cannot run on this machine), publishes
// the records `dmarc-fleet` would otherwise leave alone; `dns: none` keeps
// its meaning. Editing the module reruns the shards it publishes for; a
// module without publishRecord stops the preview, naming tenant and module.

const unavailable = await dnsServersUnavailable();
if (unavailable) console.warn(`Skipping the inventory's publisher module: ${unavailable}`);

const CLI = join(projectRoot, "provider", "bin", "dmarc-fleet.js");
const SECRET_ENV = "DMARC_TEST_PUBLISHER_KEY_SECRET";

let dns: RunningDnsServer;
let emulator: EmulatorHandle;
let project: string;
let env: Record<string, string>;
const fleet = uniqueFleetName("publisher");
const configStack = `${fleet}-config`;

/** The module a partner writes: `ttl` tells one version of it from the next. */
function publisherModule(ttl: number): string {
  return `const { Rfc2136Record } = require("pulumi-dmarc-partner");
exports.publishRecord = (record, _domain, opts, domainName) =>
  new Rfc2136Record(\`\${domainName}/by-module\`, {
    server: ${JSON.stringify(dns.address)},
    name: record.host,
    type: record.recordType,
    value: record.value,
    ttl: ${ttl},
    keyName: ${JSON.stringify(dns.key.name)},
    keySecret: process.env.${SECRET_ENV},
  }, opts);
`;
}

/**
 * The inventory: alpha's domain published by the module `publisher` names,
 * bravo's by nobody; their keys start with `prefix`, as another fleet of the
 * backend may not declare the same tenants.
 */
function inventory(publisher: string, prefix = ""): string {
  return stringify({
    defaults: { dns: { publisher } },
    tenants: [
      tenant(`${prefix}alpha`, { domains: [{ name: ZONE }] }),
      tenant(`${prefix}bravo`, { domains: [{ name: `shop.${ZONE}`, dns: "none" }] }),
    ],
  });
}

/** `dmarc-fleet` in the project, as a pipeline runs it; bounded by the test's own timeout. */
async function fleetCli(...args: string[]): Promise<CliResult> {
  const argv = [CLI, ...args, "--cwd", project, "--config-stack", configStack, "--shard-size", "1"];
  return startCommand(process.execPath, argv, project, { ...env, [SECRET_ENV]: dns.key.secret }).done;
}

/** What BIND serves at the domain's `_dmarc` name: `TYPE value @ttl`, or nothing. */
async function served(domain: string): Promise<string[]> {
  return dns.served(`_dmarc.${domain}`);
}

describe.skipIf(unavailable !== undefined)("a publisher module named by the inventory", () => {
  beforeAll(async () => {
    env = { ...(await useEngine()), PULUMI_BACKEND_URL: fleetBackendUrl(fleet) };
    dns = await startDnsServer("bind");
    emulator = await startTestEmulator();
    project = fleetProjectFolder(`dmarc-fleet-publisher-${fleet}`);
    writeFileSync(join(project, "tenants.yaml"), inventory("./publish.js"));
    writeFileSync(join(project, "wrong.yaml"), inventory("./wrong.js", "wrong-"));
    const workspace = await LocalWorkspace.create({
      workDir: project,
      envVars: env,
      projectSettings: { name: "dmarc-fleet-publisher", runtime: "nodejs" },
    });
    await workspace.createStack(configStack);
    await workspace.setAllConfig(configStack, emulator.stackConfig);
  }, 900_000);

  afterAll(async () => {
    try {
      if (project) {
        await fleetCli("destroy", "--fleet", fleet);
        await fleetCli("destroy", "--inventory", "wrong.yaml", "--fleet", `${fleet}-wrong`);
      }
    } finally {
      if (env) rmSync(backendFolder({ env }), { recursive: true, force: true });
      await emulator?.emulator.close();
      await dns?.stop();
    }
  }, 600_000);

  it("publishes the domains it is named for, and reruns their shards when the module changes", async () => {
    writeFileSync(join(project, "publish.js"), publisherModule(600));
    const up = await fleetCli("up", "--fleet", fleet, "--json");
    expect(up.code, up.stderr).toBe(0);
    expect(await served(ZONE)).toEqual([expect.stringMatching(/^TXT "?v=DMARC1;.* @600$/)]);
    expect(await served(`shop.${ZONE}`)).toEqual([]);

    const status = await fleetCli("status", "--fleet", fleet, "--json");
    const upToDate = (JSON.parse(status.stdout) as { shards: { upToDate: boolean }[] }).shards.map((s) => s.upToDate);
    expect(upToDate).toEqual([true, true]);

    writeFileSync(join(project, "publish.js"), publisherModule(900));
    const again = await fleetCli("up", "--fleet", fleet, "--json");
    expect(again.code, again.stderr).toBe(0);
    const results = (JSON.parse(again.stdout) as { results: { shard: string; status: string }[] }).results;
    // Only alpha's shard publishes through the module; bravo's says dns: none and is left alone.
    expect(results.map((result) => [result.shard, result.status]).sort()).toEqual([
      [`${fleet}-001`, "done"],
      [`${fleet}-002`, "skipped"],
    ]);
    expect(await served(ZONE)).toEqual([expect.stringMatching(/ @900$/)]);
  }, 900_000);

  it("stops the preview at a module that exports no publishRecord, naming the tenant and what it exports", async () => {
    writeFileSync(join(project, "wrong.js"), "exports.publish = () => undefined;\n");
    const refused = await fleetCli("preview", "--inventory", "wrong.yaml", "--fleet", `${fleet}-wrong`);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /tenant "Tenant wrong-alpha" \(tenants\[0\]\) dns\.publisher: the module wrong\.js must export a function publishRecord/,
    );
    expect(refused.stderr).toContain("it exports publish");
  }, 300_000);
});
