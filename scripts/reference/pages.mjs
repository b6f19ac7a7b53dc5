// The reference pages' Markdown: one page per resource type of the registry,
// one per function of the provider plugin, one for the tenants inventory, and
// their index. Every field, type, default
// and description comes from the schemas (see fields.mjs); this module only
// lays them out.

import { withoutExamples } from "../sdk/examples.mjs";
import { exampleSections, languagesSection, namesSections } from "./faces.mjs";
import { descriptionOf, fieldsOf } from "./fields.mjs";
import { code, either, generatedFrom, nestedSections, OUTPUT_COLUMNS, requiredOf, table } from "./markdown.mjs";

/** @typedef {import("./fields.mjs").Field} Field */

/** What marks a part of a page that only the TypeScript package has, not the plugin's SDKs. */
const TYPESCRIPT_ONLY = "*TypeScript package `pulumi-dmarc-partner` only.*";

/**
 * The page of one resource type.
 * @param {{ name: string, typeToken: string, pluginToken: string, definition: import("pulumi-dmarc-partner").AnyResourceDefinition, outputChanges: Record<string, { changedBy: readonly string[], everyUpdate?: true, alsoWhen?: { recorded: string }, previewed?: Function }>, schema: any }} type
 *   `name` is the provider module's name, which the page, the resource file and its example are named after;
 *   `typeToken` the TypeScript package's dynamic type token, `pluginToken` the provider plugin's, in `schema`.
 */
export function resourcePage({ name, typeToken, pluginToken, definition, outputChanges, schema }) {
  const { typeName, description, idFormat, replaceOn, urnInput, fromSettings = {}, secretOutputs = [] } = definition;
  const secretInputs = definition.secretInputs ?? [];
  const hints = definition.hints ?? [];
  const spec = schema.resources[pluginToken];
  const onChange = (field) =>
    replaceOn.includes(field.name) ? "replaces" : hints.includes(field.name) ? "changes nothing" : "updates in place";
  const inputs = fieldsOf(definition.inputs, "input").filter((field) => field.name !== urnInput);
  const outputs = fieldsOf(definition.outputs, "output");
  const idOutputs = Object.entries(definition.idOutputs ?? {});
  const settingOf = (field) => (fromSettings[field.name] ? `dmarc:${fromSettings[field.name]}` : undefined);
  const previewOf = (field) => {
    const rule = outputChanges[field.name];
    const when = [
      ...(rule?.changedBy.length ? [`${either(rule.changedBy.map(code))} changes`] : []),
      ...(rule?.alsoWhen ? [rule.alsoWhen.recorded] : []),
    ];
    if (rule?.everyUpdate) return "unknown in every update (read again)";
    if (when.length === 0) return "as recorded";
    return `${rule.previewed ? "in part unknown" : "unknown"} when ${when.join(" or when ")}`;
  };
  return [
    generatedFrom(`provider/src/resources/${name}.ts`),
    `# ${typeName}`,
    description,
    [
      `- Provider plugin token, the same from every Pulumi language: ${code(pluginToken)}`,
      `- Resource id: ${code(idFormat)}`,
    ].join("\n"),
    ...languagesSection(
      schema,
      pluginToken,
      "resource",
      { name: typeName },
      `${code(typeName)}, a dynamic resource (type token ${code(typeToken)})`,
    ),
    ...exampleSections(name, pluginToken, spec.description),
    "## Inputs",
    table(
      ["Input", "Type", "Required", "On change", "Allowed values", "Description"],
      inputs.map((field) => [
        code(field.name),
        secretInputs.includes(field.name) ? `${field.type}, secret` : field.type,
        requiredOf(field, settingOf(field)),
        onChange(field),
        field.allowed,
        hints.includes(field.name) ? `${TYPESCRIPT_ONLY} ${field.description}` : field.description,
      ]),
    ),
    ...nestedSections(inputs, OUTPUT_COLUMNS),
    ...namesSections(schema, spec.inputProperties, spec.properties),
    "## Outputs",
    hints.length > 0
      ? `Every input but ${hints.map(code).join(", ")} is also an output of the same name.`
      : "Every input is also an output of the same name.",
    table(
      ["Output", "Type", "Allowed values", "In an update's preview (plugin)", "Description"],
      [
        ...outputs.map((field) => [
          code(field.name),
          secretOutputs.includes(field.name) ? `${field.type}, secret` : field.type,
          field.allowed,
          previewOf(field),
          field.description,
        ]),
        ...idOutputs.map(([output, { description: text }]) => [
          code(output),
          "string",
          "",
          "known",
          `${text} Derived from the resource id, so known during a preview.`,
        ]),
      ],
    ),
    ...nestedSections(outputs, OUTPUT_COLUMNS),
    "## Adopting an existing object",
    `With the provider plugin, ${code(`pulumi import ${pluginToken} <name> ${idFormat}`)} reads the object and writes its declaration in the project's language ([Every Pulumi language](../guides/languages.md)).`,
    `${TYPESCRIPT_ONLY} The input ${code("importId")} takes the id of an existing object, ${code(idFormat)}, to take under management instead of creating one. Nothing is changed: the create fails, listing the differences, when the object differs from the declaration. See [Import and drift](../guides/import-and-drift.md).`,
  ].join("\n\n");
}

/**
 * The page of one function of the provider plugin.
 * @param {{ name: string, token: string, definition: { description: string, inputs: import("zod").ZodType, outputs: import("zod").ZodType, secretOutputs?: readonly string[] }, schema: any }} fn
 *   `name` the function's name, which the page and its example are named after; `token` its token in `schema`.
 */
export function functionPage({ name, token, definition, schema }) {
  const secretOutputs = definition.secretOutputs ?? [];
  const inputs = fieldsOf(definition.inputs, "input");
  const outputs = fieldsOf(definition.outputs, "output");
  return [
    generatedFrom("provider/src/plugin/invokes.ts"),
    `# ${name}`,
    definition.description,
    `- Function token, in the provider plugin, from any Pulumi language: ${code(token)}`,
    ...languagesSection(schema, token, "function", { name }),
    ...exampleSections(name, token, schema.functions[token].description),
    "## Inputs",
    inputs.length > 0
      ? table(
          ["Input", "Type", "Required", "Allowed values", "Description"],
          inputs.map((field) => [code(field.name), field.type, requiredOf(field), field.allowed, field.description]),
        )
      : "None.",
    ...nestedSections(inputs, OUTPUT_COLUMNS),
    ...namesSections(schema, schema.functions[token].inputs.properties, schema.functions[token].outputs.properties),
    "## Outputs",
    table(
      OUTPUT_COLUMNS.header,
      outputs.map((field) => {
        const [name, type, ...rest] = OUTPUT_COLUMNS.cells(field);
        return [name, secretOutputs.includes(field.name) ? `${type}, secret` : type, ...rest];
      }),
    ),
    ...nestedSections(outputs, OUTPUT_COLUMNS),
  ].join("\n\n");
}

/**
 * The page of the plugin's Tenant component, `dmarc:index:Tenant`.
 * @param {{ token: string, inputs: import("zod").ZodType, outputs: import("zod").ZodType, schema: any }} component
 *   its token in `schema`, and the zod schemas of its inputs and outputs.
 */
export function tenantPage({ token, inputs, outputs, schema }) {
  const spec = schema.resources[token];
  const inputFields = fieldsOf(inputs, "input");
  const outputFields = fieldsOf(outputs, "output");
  const columns = {
    header: ["Input", "Type", "Required", "Allowed values", "Description"],
    cells: (field) => [code(field.name), field.type, requiredOf(field), field.allowed, field.description],
  };
  return [
    generatedFrom("provider/src/plugin/tenantComponent.ts and provider/src/tenant/schema.ts"),
    "# Tenant",
    withoutExamples(spec.description),
    `- Provider plugin token, a component, the same from every Pulumi language: ${code(token)}`,
    ...languagesSection(
      schema,
      token,
      "resource",
      { name: "Tenant" },
      `${code("Tenant")}, the same component registered by the program itself, which also takes functions (${code("publishRecord")}, ${code("verifyDomain")}), a catalogue fetched once (${code("plans")}) and a ${code("label")}`,
    ),
    ...exampleSections("tenant", token, spec.description),
    "## Inputs",
    table(columns.header, inputFields.map(columns.cells)),
    ...nestedSections(inputFields, OUTPUT_COLUMNS),
    ...namesSections(schema, spec.inputProperties, spec.properties),
    "## Outputs",
    table(
      OUTPUT_COLUMNS.header,
      outputFields.map((field) => {
        const [name, type, ...rest] = OUTPUT_COLUMNS.cells(field);
        return [name, spec.properties[field.name]?.secret ? `${type}, secret` : type, ...rest];
      }),
    ),
    ...nestedSections(outputFields, OUTPUT_COLUMNS),
    "Its domains' records in a TypeScript program, with their policy ramp: [the policy ramp](policy.md); the same tenants as an inventory: [`tenants.yaml`](inventory.md).",
  ].join("\n\n");
}

/**
 * The page of the tenants inventory.
 * @param {import("zod").ZodType} schema the inventory file's schema
 */
export function inventoryPage(schema) {
  const fields = fieldsOf(schema, "input");
  const columns = {
    header: ["Key", "Type", "Required", "Allowed values", "Description"],
    cells: (field) => [code(field.name), field.type, requiredOf(field), field.allowed, field.description],
  };
  return [
    generatedFrom("provider/src/inventory/inventory.ts and the resources it takes fields from"),
    "# Tenants inventory (`tenants.yaml`)",
    descriptionOf(schema),
    "## Top level",
    table(columns.header, fields.map(columns.cells)),
    ...nestedSections(fields, columns),
  ].join("\n\n");
}

/**
 * The page of a program's policy ramp: `Tenant`'s `domains[].policy` and `stagedRecord`.
 * @param {import("zod").ZodType} schema the ramp's schema, `DomainPolicyArgs`
 */
export function policyPage(schema) {
  const fields = fieldsOf(schema, "input");
  const columns = {
    header: ["Key", "Type", "Required", "Allowed values", "Description"],
    cells: (field) => [code(field.name), field.type, requiredOf(field), field.allowed, field.description],
  };
  return [
    generatedFrom("provider/src/tenant/policy.ts"),
    "# Policy ramp in a program (`stagedRecord`, `stackPolicies`, `Tenant` domains' `policy`)",
    descriptionOf(schema),
    "```ts\nstagedRecord(domainName: string, record: pulumi.Input<DnsSetupRecord>, policy: DomainPolicyArgs): pulumi.Output<DnsSetupRecord>\n```",
    "Returns the record with `p`, `pct` and `sp` set from the ramp, every other tag kept; a refused ramp throws a `PolicyError` naming the domain, the key, the value and what is allowed. The ramp and its defaults are explained in [From monitoring to enforcement](../guides/enforcement.md).",
    "```ts\nstackPolicies(): Readonly<Partial<Record<string, DomainPolicyArgs>>>\n```",
    "Returns each domain's ramp from the stack's configuration, the project's `dmarcPolicy` key (`STACK_POLICY_KEY`): a mapping of domain name to the keys below, `since` quoted (`\"2026-11-25\"`: Pulumi reads a plain date as a timestamp). A domain the key does not name has no ramp; a refused value throws a `PolicyError` naming the domain and the key. `dmarc-fleet enforce --stack <name>` reads the same key from `Pulumi.<name>.yaml` and, with `--write`, moves `stage` and `since` there.",
    "## Keys",
    table(columns.header, fields.map(columns.cells)),
    ...nestedSections(fields, columns),
  ].join("\n\n");
}

/** What a resource is, in its description's first sentence. */
function summaryOf(description) {
  return /^.*?\.(?=\s|$)/.exec(description)?.[0] ?? description;
}

/**
 * The index of the reference pages.
 * @param {{ name: string, definition: import("pulumi-dmarc-partner").AnyResourceDefinition }[]} types
 * @param {{ name: string, definition: { description: string } }[]} functions the provider plugin's
 */
export function indexPage(types, functions) {
  return [
    generatedFrom("provider/src/resources/, provider/src/plugin/invokes.ts and provider/src/inventory/"),
    "# Resource reference",
    "One page per resource type, one for the `Tenant` component, one per function of the provider plugin, and one for the tenants inventory, generated from their schemas: every input and output, its type, default, allowed values and what a change does, each language's names, and an example in TypeScript, Python, Go, C# and YAML.",
    "Through the provider plugin, `pulumi preview` shows an in-place change as one update of the resource changed, with no call to the service: the update's outputs are the declared inputs, the outputs derived from the resource id, and each other output as recorded unless an input it depends on changed or a refresh found drift the update repairs (then it is not known until `up`; see the column *In an update's preview* of each page). The resources that refer to it by id keep their inputs known and show no change. A dynamic resource's preview knows only its inputs and the outputs derived from its id.",
    table(
      ["Resource", "Resource id", "What it is"],
      types.map(({ name, definition }) => [
        `[${definition.typeName}](${name}.md)`,
        code(definition.idFormat),
        summaryOf(definition.description),
      ]),
    ),
    "A whole customer in one block, from any Pulumi language: the component [Tenant](tenant.md).",
    "The provider plugin's functions, from any Pulumi language:",
    table(
      ["Function", "What it does"],
      functions.map(({ name, definition }) => [`[${name}](${name}.md)`, summaryOf(definition.description)]),
    ),
    "The tenants inventory: [`tenants.yaml`](inventory.md). A program's policy ramp: [`stagedRecord` and `Tenant` domains' `policy`](policy.md).",
  ].join("\n\n");
}
