import { readFileSync } from "node:fs";
import { join } from "node:path";
import { resourceDefinitions, SETTINGS } from "pulumi-dmarc-partner";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { EnumValueSpec } from "../../provider/src/plugin/enumValues";
import { invokeDefinitions } from "../../provider/src/plugin/invokes";
import { type PackageSchema, type PropertySpec, packageSchema } from "../../provider/src/plugin/schema";
import { TenantComponentInputs, TenantComponentOutputs } from "../../provider/src/plugin/tenantComponent";
import { projectRoot } from "../../scripts/project.mjs";
import { withoutExamples } from "../../scripts/sdk/examples.mjs";
import { drawnLogo, LOGO_PNG, LOGO_SIZE } from "../../scripts/sdk/logo.mjs";
import { REGISTRY_SCHEMA } from "../../scripts/sdk/schema.mjs";

// The plugin's schema is derived from the registry; this holds the two
// together from the other side: every input and output of every type, read
// here from the zod schemas themselves, stands in the schema with its
// description, its requiredness and its secrecy, and nothing else does.

const schema: PackageSchema = packageSchema("1.2.3");
const definitions = Object.values(resourceDefinitions);

const keysOf = (object: z.ZodObject) => Object.keys(object.shape);
/** The inputs a program of the plugin declares: all but the URN's and the TypeScript Tenant's hints. */
const declaredKeys = (definition: (typeof definitions)[number]) =>
  keysOf(definition.inputs).filter(
    (key) => key !== definition.urnInput && !(definition.hints as readonly string[] | undefined)?.includes(key),
  );
/** A field's `.describe()` text, wherever in its chain of wrappers it was given, as zod's own JSON Schema finds it. */
const descriptionOf = (object: z.ZodObject, key: string) =>
  (z.toJSONSchema(object, { unrepresentable: "any" }).properties?.[key] as { description?: string } | undefined)
    ?.description;

/** The named type a property refers to (a relaxed enumeration's, beside `string`), or the property itself. */
function resolved(property: PropertySpec): { type?: string; enum?: EnumValueSpec[]; properties?: object } {
  const reference = property.$ref ?? property.oneOf?.find((alternative) => alternative.$ref)?.$ref;
  if (!reference) return property;
  const named = schema.types[reference.replace("#/types/", "")];
  if (!named) throw new Error(`dangling reference ${reference}`);
  return named;
}

describe("the plugin's schema against the registry", () => {
  it("has one resource per registered type, named dmarc:index:<Type>, and the Tenant component, and no other", () => {
    expect(Object.keys(schema.resources).sort()).toEqual(
      [...definitions.map((definition) => `dmarc:index:${definition.typeName}`), "dmarc:index:Tenant"].sort(),
    );
    expect(schema.name).toBe("dmarc");
    expect(schema.version).toBe("1.2.3");
  });

  it("names where Pulumi fetches the plugin: the releases whose tags also publish the Go SDK, or the address a build is given", () => {
    expect(schema.pluginDownloadURL).toBe("github://api.github.com/dmarc-partner/pulumi-dmarc");
    expect(schema.language.go.importBasePath).toBe("github.com/dmarc-partner/pulumi-dmarc/sdk/go/dmarc");
    expect(packageSchema("1.2.3", "https://mirror.example/dmarc").pluginDownloadURL).toBe(
      "https://mirror.example/dmarc",
    );
  });

  it("is checked in at sdk/schema.json as the provider makes it now, its examples aside, where the Pulumi Registry reads it", () => {
    // test/package/plugin.test.ts holds the examples too, against the executable's schema.
    const { version } = JSON.parse(readFileSync(join(projectRoot, "provider", "package.json"), "utf8"));
    const checkedIn = JSON.parse(readFileSync(REGISTRY_SCHEMA, "utf8"));
    for (const member of [...Object.values(checkedIn.resources), ...Object.values(checkedIn.functions)] as {
      description: string;
    }[])
      member.description = withoutExamples(member.description);
    expect(checkedIn, "sdk/schema.json is stale: run `npm run sdk` and commit it").toEqual(packageSchema(version));
  });

  it("shows the package's logo from provider/logo.png at the release's tag of the repository provider/package.json names", () => {
    const manifest = JSON.parse(readFileSync(join(projectRoot, "provider", "package.json"), "utf8"));
    const repository = /^git\+https:\/\/github\.com\/(.+)\.git$/.exec(manifest.repository.url)?.[1];
    expect(schema.repository).toBe(`https://github.com/${repository}`);
    expect(schema.logoUrl).toBe(`https://raw.githubusercontent.com/${repository}/v1.2.3/provider/logo.png`);
  });

  it(`has a real logo: a PNG of ${LOGO_SIZE}×${LOGO_SIZE} (at least 128) drawn from provider/logo.svg, in colour`, async () => {
    const png = readFileSync(LOGO_PNG);
    expect(png.subarray(1, 4).toString("latin1")).toBe("PNG");
    // The IHDR chunk, first after the signature: width and height, big-endian.
    const [width, height] = [png.readUInt32BE(16), png.readUInt32BE(20)];
    expect([width, height]).toEqual([LOGO_SIZE, LOGO_SIZE]);
    expect(width).toBeGreaterThanOrEqual(128);
    expect(
      png.equals(await drawnLogo()),
      "provider/logo.png is not what provider/logo.svg draws: run npm run sdk",
    ).toBe(true);
    expect(png.length, "a blank image compresses to almost nothing").toBeGreaterThan(4000);
  });

  it.each(definitions.map((definition) => [definition.typeName, definition] as const))(
    "%s: every declared input, with its description, and only those: not the TypeScript Tenant's hints",
    (_name, definition) => {
      const spec = schema.resources[`dmarc:index:${definition.typeName}`];
      const declared = declaredKeys(definition);
      expect(Object.keys(spec?.inputProperties ?? {}).sort()).toEqual(declared.sort());
      for (const key of declared)
        expect(spec?.inputProperties[key]?.description, key).toBe(descriptionOf(definition.inputs, key));
    },
  );

  it.each(definitions.map((definition) => [definition.typeName, definition] as const))(
    "%s: required inputs are those with neither a default nor a setting to fill them",
    (_name, definition) => {
      const spec = schema.resources[`dmarc:index:${definition.typeName}`];
      const fromSettings = Object.keys(definition.fromSettings ?? {});
      const required = keysOf(definition.inputs).filter(
        (key) =>
          !(definition.inputs.shape as Record<string, z.ZodType>)[key]?.safeParse(undefined).success &&
          !fromSettings.includes(key),
      );
      expect([...(spec?.requiredInputs ?? [])].sort()).toEqual(required.sort());
    },
  );

  it.each(definitions.map((definition) => [definition.typeName, definition] as const))(
    "%s: records every input, every computed output and those made from the id",
    (_name, definition) => {
      const spec = schema.resources[`dmarc:index:${definition.typeName}`];
      const recorded = new Set([
        ...declaredKeys(definition),
        ...keysOf(definition.outputs),
        ...Object.keys(definition.idOutputs ?? {}),
      ]);
      expect(new Set(Object.keys(spec?.properties ?? {}))).toEqual(recorded);
      for (const key of keysOf(definition.outputs)) {
        expect(spec?.properties[key]?.description, key).toBe(descriptionOf(definition.outputs, key));
        expect(spec?.required, key).toContain(key);
      }
    },
  );

  it.each(definitions.map((definition) => [definition.typeName, definition] as const))(
    "%s: marks exactly its secret inputs and outputs secret",
    (_name, definition) => {
      const spec = schema.resources[`dmarc:index:${definition.typeName}`];
      const secret = (properties: Record<string, PropertySpec>) =>
        Object.entries(properties)
          .filter(([, property]) => property.secret)
          .map(([key]) => key)
          .sort();
      expect(secret(spec?.inputProperties ?? {})).toEqual([...(definition.secretInputs ?? [])].sort());
      expect(secret(spec?.properties ?? {})).toEqual(
        [...(definition.secretInputs ?? []), ...(definition.secretOutputs ?? [])].sort(),
      );
    },
  );

  it("serves the Tenant as a component taking its data arguments and where to publish, the key's secret secret", () => {
    const tenant = schema.resources["dmarc:index:Tenant"];
    expect(tenant?.isComponent).toBe(true);
    expect(Object.keys(tenant?.inputProperties ?? {}).sort()).toEqual(keysOf(TenantComponentInputs).sort());
    expect(Object.keys(tenant?.properties ?? {}).sort()).toEqual(keysOf(TenantComponentOutputs).sort());
    expect(tenant?.requiredInputs.sort()).toEqual(["group", "name"]);
    const undescribed = Object.entries(tenant?.inputProperties ?? {}).filter(([, property]) => !property.description);
    expect(undescribed.map(([key]) => key)).toEqual([]);
    const publishing = resolved(tenant?.inputProperties.rfc2136 ?? {}) as { properties?: Record<string, PropertySpec> };
    expect(publishing.properties?.keySecret?.secret).toBe(true);
    expect(tenant?.properties.webhookSecrets?.secret).toBe(true);
    expect(resolved(tenant?.inputProperties.onDelete ?? {}).enum?.map((entry) => entry.value)).toEqual([
      "delete",
      "cancelSubscriptions",
      "keep",
    ]);
  });

  it("carries each enumeration's allowed values and each input's default", () => {
    const domain = schema.resources["dmarc:index:Domain"];
    const setupRecordType = domain?.inputProperties.setupRecordType;
    expect(setupRecordType?.default).toBe("TXT");
    expect(resolved(setupRecordType ?? {}).enum?.map((entry) => entry.value)).toEqual(["TXT", "CNAME"]);
    const events = schema.resources["dmarc:index:Webhook"]?.inputProperties.events;
    expect(events?.type).toBe("array");
    expect(resolved(events?.items ?? {}).enum?.map((entry) => entry.value)).toEqual([
      "domain.created",
      "domain.verified",
      "report.received",
    ]);
    expect(schema.resources["dmarc:index:Rfc2136Record"]?.inputProperties.ttl).toMatchObject({
      type: "integer",
      default: 3600,
    });
  });

  it("names each enumeration's values as each language expects, with their meanings where the field gives them", () => {
    const enumerations = Object.values(schema.types).flatMap((type) => ("enum" in type ? [type.enum] : []));
    expect(enumerations.length).toBeGreaterThan(5);
    for (const values of enumerations)
      for (const { value, name } of values) expect(name, value).toMatch(/^[A-Z][A-Za-z0-9]*$/);
    const events = schema.types["dmarc:index:WebhookEvent"];
    expect(events && "enum" in events && events.enum.map((entry) => entry.name)).toEqual([
      "DomainCreated",
      "DomainVerified",
      "ReportReceived",
    ]);
    expect(resolved(schema.resources["dmarc:index:Invitation"]?.inputProperties.role ?? {}).enum).toContainEqual({
      value: "no_access",
      name: "NoAccess",
    });
    expect(resolved(schema.resources["dmarc:index:Domain"]?.inputProperties.setupRecordType ?? {}).enum).toEqual([
      { value: "TXT", name: "TXT" },
      { value: "CNAME", name: "CNAME" },
    ]);
    expect(resolved(schema.resources["dmarc:index:Organization"]?.inputProperties.onDelete ?? {}).enum).toEqual([
      {
        value: "delete",
        name: "Delete",
        description: "Cancel every active subscription, then delete the organisation.",
      },
      {
        value: "cancelSubscriptions",
        name: "CancelSubscriptions",
        description:
          "Cancel every active subscription and keep the organisation and its data, only forgetting it in state.",
      },
    ]);
  });

  it("lets a Domain's setupRecord.recordType, an output, feed an Rfc2136Record's type: a string or the enumeration", () => {
    const recordType = schema.resources["dmarc:index:Domain"]?.properties.setupRecord;
    const setupRecord = schema.types[recordType?.$ref?.replace("#/types/", "") ?? ""];
    expect(setupRecord && "properties" in setupRecord && setupRecord.properties.recordType?.type).toBe("string");
    expect(schema.resources["dmarc:index:Rfc2136Record"]?.inputProperties.type?.oneOf).toEqual([
      { type: "string" },
      { $ref: "#/types/dmarc:index:DomainSetupRecordType" },
    ]);
    // An input no output carries the values of keeps the enumeration alone, and a typed language its constants only.
    expect(schema.resources["dmarc:index:Invitation"]?.inputProperties.role?.$ref).toBe(
      "#/types/dmarc:index:InvitationRole",
    );
  });

  it("renames for C# a property named as its class, which C# refuses (CS0542): a Domain's domain is DomainName", () => {
    const domain = schema.resources["dmarc:index:Domain"];
    expect(domain?.inputProperties.domain?.language).toEqual({ csharp: { name: "DomainName" } });
    expect(domain?.properties.domain?.language).toEqual({ csharp: { name: "DomainName" } });
    const classes = Object.entries({ ...schema.resources, ...schema.types }).map(([token, spec]) => ({
      name: token.replace("dmarc:index:", ""),
      properties:
        "properties" in spec ? { ...spec.properties, ...("inputProperties" in spec ? spec.inputProperties : {}) } : {},
    }));
    for (const { name, properties } of classes)
      for (const [key, property] of Object.entries(properties))
        if (key.charAt(0).toUpperCase() + key.slice(1) === name)
          expect(property.language, `${name}.${key}`).toBeDefined();
  });

  it("names every type it refers to", () => {
    const references = JSON.stringify(schema).match(/#\/types\/[^"]+/g) ?? [];
    expect(references.length).toBeGreaterThan(0);
    for (const reference of references) expect(schema.types, reference).toHaveProperty([reference.slice(8)]);
  });

  it("configures the provider with every dmarc:* setting, the secret ones secret, each read from its variable by the SDKs", () => {
    expect(Object.keys(schema.config.variables).sort()).toEqual(SETTINGS.map((setting) => setting.key).sort());
    for (const setting of SETTINGS) {
      const variable = schema.config.variables[setting.key];
      expect(variable?.secret ?? false, setting.key).toBe(setting.secret);
      expect(variable?.description, setting.key).toContain(setting.env);
      expect(variable?.defaultInfo, setting.key).toEqual({ environment: [setting.env] });
    }
    expect(schema.provider.inputProperties).toEqual(schema.config.variables);
  });

  it("serves every function of the invoke table, with its inputs and secret outputs", () => {
    expect(Object.keys(schema.functions).sort()).toEqual(
      Object.keys(invokeDefinitions)
        .map((name) => `dmarc:index:${name}`)
        .sort(),
    );
    expect(schema.functions["dmarc:index:getPriceId"]?.inputs.required).toEqual(["plan"]);
    expect(schema.functions["dmarc:index:createMagicLink"]?.outputs.properties.url?.secret).toBe(true);
  });
});
