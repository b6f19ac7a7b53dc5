import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import * as dmarc from "pulumi-dmarc-partner";
import { parse } from "yaml";
import { projectRoot } from "../../scripts/project.mjs";
import type { EmulatorHandle } from "./emulator";
import { createTestStack } from "./engine";
import { onceARun } from "./onceARun";
import { serviceShape } from "./serviceShape";

// The customer the plugin's Tenant component is declared with in every
// language's test (test/fixtures/plugin/tenantComponent.yaml), and what the
// TypeScript Tenant leaves on the service for the same customer: each
// language's Tenant must leave exactly that.

/** The YAML program of the Tenant component, as a partner writes it. */
export const tenantComponentProgram = parse(
  readFileSync(join(projectRoot, "test", "fixtures", "plugin", "tenantComponent.yaml"), "utf8"),
) as { resources: { globex: { properties: Record<string, unknown> } } };

/** A zone's TSIG key, as the emulator's DNS server takes it. */
interface ZoneKey {
  name: string;
  secret: string;
}

/** The same customer through the TypeScript Tenant and the dynamic resources, publishing as the component does. */
function typeScriptTenant(dnsServer: string, zoneKey: ZoneKey) {
  const { rfc2136: _publishing, ...declared } = tenantComponentProgram.resources.globex.properties;
  return async () => {
    new dmarc.Tenant("globex", {
      ...(declared as unknown as dmarc.TenantArgs),
      publishRecord: (record, _domain, opts, domainName) =>
        new dmarc.Rfc2136Record(
          `${domainName}/dns-record`,
          {
            server: dnsServer,
            keyName: zoneKey.name,
            keySecret: pulumi.secret(zoneKey.secret),
            name: record.host,
            type: record.recordType,
            value: record.value,
          },
          opts,
        ),
    });
  };
}

/**
 * What the TypeScript Tenant leaves on an emptied emulator, in
 * {@link serviceShape}'s terms. Made once a run, by the first language's
 * test to ask, on its emulator (its zone keyed with `zoneKey`), which must
 * be empty then; the stack is destroyed and removed after.
 */
export function typeScriptTenantShape(emulator: EmulatorHandle, zoneKey: ZoneKey): Promise<unknown> {
  return onceARun("typescript-tenant-shape", async () => {
    const stack = await createTestStack({
      projectName: "dmarc-ts-tenant",
      program: typeScriptTenant(emulator.emulator.dnsServer ?? "", zoneKey),
      config: emulator.stackConfig,
    });
    await stack.up();
    const shape = await serviceShape(emulator);
    await stack.destroy();
    await stack.workspace.removeStack(stack.name);
    return shape;
  });
}
