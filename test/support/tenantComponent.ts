import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import type { PulumiFn } from "@pulumi/pulumi/automation";
import * as dmarc from "pulumi-dmarc-partner";
import { parse } from "yaml";
import { projectRoot } from "../../scripts/engine.mjs";

// The customer the plugin's Tenant component declares in every language's
// test (test/fixtures/plugin/tenantComponent.yaml), and the same customer
// through the TypeScript Tenant: what each language's component must leave
// on the service.

/** The Pulumi YAML program declaring the customer with `dmarc:index:Tenant`. */
export const tenantComponentProgram = parse(
  readFileSync(join(projectRoot, "test", "fixtures", "plugin", "tenantComponent.yaml"), "utf8"),
) as { resources: { globex: { properties: Record<string, unknown> } } };

/** Where the component publishes each domain's record (its `rfc2136` input). */
export interface ZoneUpdates {
  server: string;
  keyName: string;
  keySecret: string;
}

/** The same customer through the TypeScript Tenant and the dynamic resources, publishing as the component does. */
export function typeScriptTenant(zone: ZoneUpdates): PulumiFn {
  const { rfc2136: _publishing, ...declared } = tenantComponentProgram.resources.globex.properties;
  return async () => {
    new dmarc.Tenant("globex", {
      ...(declared as unknown as dmarc.TenantArgs),
      publishRecord: (record, _domain, opts, domainName) =>
        new dmarc.Rfc2136Record(
          `${domainName}/dns-record`,
          {
            server: zone.server,
            keyName: zone.keyName,
            keySecret: pulumi.secret(zone.keySecret),
            name: record.host,
            type: record.recordType,
            value: record.value,
          },
          opts,
        ),
    });
  };
}
