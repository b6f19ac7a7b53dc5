import { z } from "zod";
import { ClientOptionsSchema } from "../client";
import { registeredTypes } from "../registry";
import { PARTNER_ID_DESCRIPTION, SETTINGS, type SettingKey } from "../runtime/config";
import type { AnyResourceDefinition } from "../runtime/lifecycle";
import { PLUGIN_PACKAGE, pluginTypeToken as typeToken } from "../runtime/typeToken";
import { TENANT_TYPE } from "../tenant/tenant";
import { type EnumValueSpec, enumValues, pascal, valuesKey } from "./enumValues";
import { invokeDefinitions } from "./invokes";
import { TENANT_COMPONENT_DESCRIPTION, TenantComponentInputs, TenantComponentOutputs } from "./tenantComponent";

// The Pulumi package schema of the plugin, derived from what the dynamic
// resources are declared with: each type's zod schemas and comments (through
// zod's own JSON Schema of them), its secret and id-derived outputs, the
// `dmarc:*` settings and the invoke table. Nothing here is written beside a
// definition: a new registry entry is a new resource of the schema.

/** The JSON Schema node zod writes for a field, as far as the conversion reads it. */
interface JsonNode {
  type?: string | string[];
  enum?: unknown[];
  items?: JsonNode;
  properties?: Record<string, JsonNode>;
  required?: string[];
  description?: string;
  default?: unknown;
  anyOf?: JsonNode[];
  additionalProperties?: JsonNode | boolean;
}

/** A property of the Pulumi schema: a primitive, a list, or a reference to a named type. */
export interface PropertySpec {
  type?: string;
  $ref?: string;
  oneOf?: PropertySpec[];
  items?: PropertySpec;
  additionalProperties?: PropertySpec;
  description?: string;
  default?: unknown;
  secret?: boolean;
  /** Where an SDK reads the value when a program gives none: the setting's environment variable. */
  defaultInfo?: { environment: string[] };
  language?: { csharp: { name: string } };
}

interface ObjectSpec {
  description?: string;
  properties: Record<string, PropertySpec>;
  required?: string[];
}

interface ResourceSpec extends ObjectSpec {
  inputProperties: Record<string, PropertySpec>;
  requiredInputs: string[];
  isComponent?: true;
}

type TypeSpec = (ObjectSpec & { type: "object" }) | { type: "string"; description?: string; enum: EnumValueSpec[] };

export interface PackageSchema {
  name: string;
  version: string;
  displayName: string;
  description: string;
  license: string;
  keywords: string[];
  publisher: string;
  repository: string;
  logoUrl: string;
  config: { variables: Record<string, PropertySpec> };
  provider: {
    description: string;
    inputProperties: Record<string, PropertySpec>;
    properties: Record<string, PropertySpec>;
  };
  resources: Record<string, ResourceSpec>;
  functions: Record<string, { description: string; inputs: ObjectSpec; outputs: ObjectSpec }>;
  types: Record<string, TypeSpec>;
  pluginDownloadURL: string;
  meta: typeof SDK_SETTINGS.meta;
  language: typeof SDK_SETTINGS.language;
}

const PRIMITIVES = new Set(["string", "integer", "number", "boolean"]);

/** zod's JSON Schema of an object schema, on the side the plugin receives (`input`) or records (`output`). */
function jsonOf(schema: z.ZodType, io: "input" | "output"): JsonNode {
  return z.toJSONSchema(schema, { io, unrepresentable: "any" }) as JsonNode;
}

/** The one type a node stands for, `null` dropped (a nullable string is a string the plugin may leave out). */
function typeOfNode(node: JsonNode): string | undefined {
  if (node.anyOf) return node.anyOf.map(typeOfNode).find((type) => type !== undefined && type !== "null");
  if (Array.isArray(node.type)) return node.type.find((type) => type !== "null");
  return node.type;
}

/**
 * Where named types go, and whether enumerations become enum types: on
 * inputs, so a typed language offers the allowed values; outputs stay
 * strings, as Pulumi's own providers keep them (an enum-typed output is not
 * assignable in Pulumi YAML, even to an input of the same enum). An input
 * whose values a resource's output carries (`relaxed`, by `valuesKey`)
 * takes a string too, as Pulumi's providers' relaxed enums do: so that
 * output feeds it in a typed language (`Type: domain.SetupRecord.RecordType()`
 * in Go), and the constants still do.
 */
interface TypeScope {
  types: Record<string, TypeSpec>;
  enums: boolean;
  relaxed: ReadonlySet<string>;
}

/**
 * A field as a schema property; enumerations and objects become named types
 * (`<Owner><Field>`, as Pulumi's own providers name them) added to `types`.
 */
function propertyOf(node: JsonNode, typeName: string, scope: TypeScope): PropertySpec {
  const described = {
    ...(node.description === undefined ? {} : { description: node.description }),
    // Pulumi's schema takes a default of a primitive only.
    ...(["string", "number", "boolean"].includes(typeof node.default) ? { default: node.default } : {}),
  };
  const type = typeOfNode(node);
  if (node.enum?.every((value) => typeof value === "string")) {
    const values = node.enum as string[];
    if (!scope.enums) return { type: "string", ...described };
    const enumeration = { $ref: `#/types/${enumType(values, typeName, scope.types, node.description)}` };
    if (scope.relaxed.has(valuesKey(values))) return { oneOf: [{ type: "string" }, enumeration], ...described };
    return { ...enumeration, ...described };
  }
  if (type === "array") {
    return { type: "array", items: propertyOf(node.items ?? {}, itemName(typeName), scope), ...described };
  }
  if (type === "object" && node.properties) {
    const token = named(scope.types, typeName, { type: "object", ...objectOf(node, typeName, scope) });
    return { $ref: `#/types/${token}`, ...described };
  }
  if (type === "object") {
    const values = node.additionalProperties;
    const of =
      typeof values === "object" ? propertyOf(values, itemName(typeName), scope) : { $ref: "pulumi.json#/Any" };
    return { type: "object", additionalProperties: of, ...described };
  }
  return { type: type && PRIMITIVES.has(type) ? type : "string", ...described };
}

/**
 * The named type of an enumeration: the one already named for the same
 * values, so that an output of one resource (a Domain's record type) can be
 * the input of another (an Rfc2136Record's `type`) in a typed language.
 * `fieldDescription` is the first field's, which may give a value's meaning.
 */
function enumType(
  values: readonly string[],
  typeName: string,
  types: Record<string, TypeSpec>,
  fieldDescription: string | undefined,
): string {
  const same = Object.entries(types).find(
    ([, type]) => type.type === "string" && valuesKey(type.enum.map((entry) => entry.value)) === valuesKey(values),
  );
  if (same) return same[0];
  return named(types, typeName, { type: "string", enum: enumValues(values, typeName, fieldDescription) });
}

/** The name of a list's items: `WebhookEvents` → `WebhookEvent`. */
const itemName = (listName: string) => (listName.endsWith("s") ? listName.slice(0, -1) : `${listName}Item`);

/** Adds a named type, refusing a second type under a name already taken: the schema must stay unambiguous. */
function named(types: Record<string, TypeSpec>, typeName: string, type: TypeSpec): string {
  const token = typeToken(typeName);
  const taken = types[token];
  if (taken && JSON.stringify(taken) !== JSON.stringify(type))
    throw new Error(`the plugin's schema names two different types ${token}`);
  types[token] = type;
  return token;
}

/**
 * A property named as its class (a Domain's `domain`) gets another name in
 * C#, where a member may not be named as the type that encloses it (CS0542):
 * `DomainName`, as Pulumi's own schemas rename such properties.
 */
function withCsharpName(property: PropertySpec, key: string, className: string): PropertySpec {
  if (pascal(key) !== className) return property;
  return { ...property, language: { csharp: { name: `${className}Name` } } };
}

function objectOf(node: JsonNode, typeName: string, scope: TypeScope): ObjectSpec {
  const properties = Object.fromEntries(
    Object.entries(node.properties ?? {}).map(([key, field]) => [
      key,
      withCsharpName(propertyOf(field, `${typeName}${pascal(key)}`, scope), key, typeName),
    ]),
  );
  return {
    ...(node.description === undefined ? {} : { description: node.description }),
    properties,
    ...(node.required && node.required.length > 0 ? { required: node.required } : {}),
  };
}

function markSecret(properties: Record<string, PropertySpec>, keys: readonly string[]): void {
  for (const key of keys) {
    const property = properties[key];
    if (property) property.secret = true;
  }
}

/** The scopes of a schema's inputs and outputs, which share its named types. */
interface Scopes {
  inputs: TypeScope;
  outputs: TypeScope;
}

/**
 * The inputs no program of the plugin declares: the one it fills with the
 * URN, and the hints the TypeScript package's own Tenant sets (a Domain's
 * `declaredTogether`), which the plugin still accepts from its Tenant.
 */
const internalInputs = (definition: AnyResourceDefinition): string[] =>
  [definition.urnInput, ...(definition.hints ?? [])].filter((key): key is string => key !== undefined);

function withoutKeys(object: ObjectSpec, keys: readonly string[]): ObjectSpec {
  for (const key of keys) delete object.properties[key];
  return { ...object, required: (object.required ?? []).filter((key) => !keys.includes(key)) };
}

/** The inputs a declaration gives: every input but the internal ones. */
function declaredInputs(definition: AnyResourceDefinition, scope: TypeScope): ObjectSpec {
  const inputs = withoutKeys(
    objectOf(jsonOf(definition.inputs, "input"), definition.typeName, scope),
    internalInputs(definition),
  );
  const filled = Object.keys(definition.fromSettings ?? {});
  return { ...inputs, required: (inputs.required ?? []).filter((key) => !filled.includes(key)) };
}

/** A resource type: its inputs, and what it records (its inputs after defaults, its outputs, those made from its id). */
function resourceSpec(definition: AnyResourceDefinition, scopes: Scopes): ResourceSpec {
  const inputs = declaredInputs(definition, scopes.inputs);
  const checked = withoutKeys(
    objectOf(jsonOf(definition.inputs, "output"), definition.typeName, scopes.outputs),
    internalInputs(definition),
  );
  const outputs = objectOf(jsonOf(definition.outputs, "output"), definition.typeName, scopes.outputs);
  const fromId = Object.fromEntries(
    Object.entries(definition.idOutputs ?? {}).map(([key, output]) => [
      key,
      { type: "string", description: output.description },
    ]),
  );
  const properties: Record<string, PropertySpec> = { ...checked.properties, ...outputs.properties, ...fromId };
  for (const property of Object.values(properties)) delete property.default;
  markSecret(inputs.properties, definition.secretInputs ?? []);
  markSecret(properties, [...(definition.secretInputs ?? []), ...(definition.secretOutputs ?? [])]);
  const required = [...(checked.required ?? []), ...(outputs.required ?? []), ...Object.keys(fromId)];
  return {
    description: `${definition.description}\n\n${importSection(typeToken(definition.typeName), definition.idFormat)}`,
    inputProperties: inputs.properties,
    requiredInputs: inputs.required ?? [],
    properties,
    required: [...new Set(required)],
  };
}

/** How an existing object is adopted, as Pulumi's own providers' descriptions end. */
function importSection(token: string, idFormat: string): string {
  return [
    "## Import",
    `An existing object is adopted by its id, \`${idFormat}\`:`,
    `\`\`\`sh\n$ pulumi import ${token} <name> ${idFormat}\n\`\`\``,
  ].join("\n\n");
}

/** Each `dmarc:*` setting as a config variable, with the client option's description and its secrecy. */
function settingVariables(): Record<string, PropertySpec> {
  const options = ClientOptionsSchema.shape as Record<string, z.ZodType>;
  const json = jsonOf(ClientOptionsSchema, "input").properties ?? {};
  const variables: Record<string, PropertySpec> = {};
  for (const setting of SETTINGS) {
    const node = json[setting.key as Exclude<SettingKey, "partnerId">];
    const description = options[setting.key]?.description ?? PARTNER_ID_DESCRIPTION;
    const type = node ? typeOfNode(node) : "string";
    variables[setting.key] = {
      type: type === "integer" || type === "number" ? type : "string",
      description: `${description} Environment variable: \`${setting.env}\`.`,
      defaultInfo: { environment: [setting.env] },
      ...(setting.secret ? { secret: true } : {}),
    };
  }
  return variables;
}

/** The repository whose releases carry the plugin's archives, and whose tags publish the Go SDK. */
const RELEASE_REPOSITORY = "dmarc-partner/pulumi-dmarc";

/**
 * Where `pulumi` fetches the plugin's archive for a version by itself
 * (`pulumi-resource-dmarc-v<version>-<os>-<arch>.tar.gz` of the release
 * `v<version>`). A fork or a mirror builds with another address
 * (DMARC_PLUGIN_DOWNLOAD_URL, read by the build scripts).
 */
export const PLUGIN_DOWNLOAD_URL = `github://api.github.com/${RELEASE_REPOSITORY}`;

/** The package's logo as the Pulumi Registry shows it: provider/logo.png at the release's tag, as published. */
const logoUrl = (version: string) =>
  `https://raw.githubusercontent.com/${RELEASE_REPOSITORY}/v${version}/provider/logo.png`;

/** How Pulumi's code generators name and package each SDK; a Go SDK gets its go.mod, and every SDK's manifest its version, rather than a placeholder. */
const SDK_SETTINGS = {
  meta: { moduleFormat: "(.*)", supportPack: true },
  language: {
    nodejs: { packageName: "@dmarc-partner/pulumi-dmarc", dependencies: { "@pulumi/pulumi": "^3.139.0" } },
    python: { packageName: "pulumi_dmarc", requires: { pulumi: ">=3.139.0,<4.0.0" } },
    go: {
      importBasePath: `github.com/${RELEASE_REPOSITORY}/sdk/go/dmarc`,
      generateResourceContainerTypes: false,
    },
    csharp: { rootNamespace: "DmarcPartner", packageReferences: { Pulumi: "3.*" } },
  },
} as const;

/** Every enumeration within `node` (its own values, its fields', its items'), by valuesKey. */
function enumerationsIn(node: JsonNode): string[] {
  const nested = [...Object.values(node.properties ?? {}), ...(node.items ? [node.items] : []), ...(node.anyOf ?? [])];
  return [...(node.enum ? [valuesKey(node.enum)] : []), ...nested.flatMap(enumerationsIn)];
}

/**
 * The enumerations that resources and functions give as outputs of their
 * own (a Domain's `setupRecord.recordType`), not as their inputs given back:
 * the inputs of the same values take those outputs (TypeScope).
 */
function enumerationsOfOutputs(): ReadonlySet<string> {
  const outputs = [
    ...registeredTypes.map(({ definition }) => definition.outputs),
    ...Object.values(invokeDefinitions).map((invoke) => invoke.outputs),
    TenantComponentOutputs,
  ];
  return new Set(outputs.flatMap((schema) => enumerationsIn(jsonOf(schema, "output"))));
}

/** The Tenant as a component: its inputs and outputs from the component's schemas. */
function tenantComponentSpec(scopes: Scopes): ResourceSpec & { isComponent: true } {
  const inputs = objectOf(jsonOf(TenantComponentInputs, "input"), "Tenant", scopes.inputs);
  const outputs = objectOf(jsonOf(TenantComponentOutputs, "output"), "Tenant", scopes.outputs);
  const publishing = inputs.properties.rfc2136?.$ref?.replace("#/types/", "");
  const settings = publishing ? scopes.inputs.types[publishing] : undefined;
  if (settings?.type === "object") markSecret(settings.properties, ["keySecret"]);
  markSecret(outputs.properties, ["webhookSecrets"]);
  return {
    isComponent: true,
    description: TENANT_COMPONENT_DESCRIPTION,
    inputProperties: inputs.properties,
    requiredInputs: inputs.required ?? [],
    properties: outputs.properties,
    required: outputs.required ?? [],
  };
}

/** The package schema of the plugin at `version`, fetched by Pulumi from `pluginDownloadURL`. */
export function packageSchema(version: string, pluginDownloadURL = PLUGIN_DOWNLOAD_URL): PackageSchema {
  const types: Record<string, TypeSpec> = {};
  const relaxed = enumerationsOfOutputs();
  const scopes = { inputs: { types, enums: true, relaxed }, outputs: { types, enums: false, relaxed } };
  const resources = Object.fromEntries(
    registeredTypes.map(({ typeName, definition }) => [typeToken(typeName), resourceSpec(definition, scopes)]),
  );
  resources[TENANT_TYPE] = tenantComponentSpec(scopes);
  const functions = Object.fromEntries(
    Object.entries(invokeDefinitions).map(([name, invoke]) => {
      // A function's types are named after their fields alone (`Plan`, `PlanPrice`), not the function.
      const outputs = objectOf(jsonOf(invoke.outputs, "output"), "", scopes.outputs);
      markSecret(outputs.properties, invoke.secretOutputs ?? []);
      return [
        typeToken(name),
        {
          description: invoke.description,
          inputs: objectOf(jsonOf(invoke.inputs, "input"), "", scopes.inputs),
          outputs,
        },
      ];
    }),
  );
  const variables = settingVariables();
  return {
    name: PLUGIN_PACKAGE,
    version,
    displayName: "DMARC partner",
    description:
      "Tenants of the DMARC management service for its partners: organisations, domain groups, domains, verification, webhooks, subscriptions, invitations and RFC 2136 DNS records.",
    license: "Apache-2.0",
    keywords: ["pulumi", "dmarc", "dns", "category/network", "kind/native"],
    // The packages' author and source (npm's provenance checks the source against the publishing repository).
    publisher: "DMARC partner",
    repository: `https://github.com/${RELEASE_REPOSITORY}`,
    logoUrl: logoUrl(version),
    config: { variables },
    provider: {
      description: "The DMARC partner provider: the service's address and credentials, and how calls are paced.",
      inputProperties: variables,
      properties: {},
    },
    resources,
    functions,
    types,
    pluginDownloadURL,
    ...SDK_SETTINGS,
  };
}
