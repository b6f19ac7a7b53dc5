// What a page shows of each face of a resource or function: the provider
// plugin's token, each language's package and names (its fields', its
// enumerations' members as each SDK spells them), what only the TypeScript
// package pulumi-dmarc-partner has, and the example the schema's description
// carries, in every language.

import { EXAMPLE_LANGUAGES, exampleIn } from "../sdk/examples.mjs";
import { code, table } from "./markdown.mjs";
import { enumerationOf, languageFaces } from "./names.mjs";

/** The TypeScript package's own face, which the plugin's SDKs do not have. */
const TYPESCRIPT_PACKAGE = "pulumi-dmarc-partner";

/**
 * "## In each language": the package and the class (`kind` "resource") or
 * function (`kind` "function") of each SDK, YAML's token, and what the
 * TypeScript package has in its place when `typescriptOnly` says it.
 * @param {{ name: string }} member the member's name in the schema (`Domain`, `getPlans`)
 */
export function languagesSection(schema, token, kind, member, typescriptOnly) {
  const faces = languageFaces(schema);
  const yaml = kind === "resource" ? `type: ${token}` : `fn::invoke: { function: ${token} }`;
  return [
    "## In each language",
    table(
      ["Language", "Package", kind === "resource" ? "Resource" : "Function"],
      [
        ...faces.map((face) => [face.heading, code(face.package), code(face[kind](member.name))]),
        ["YAML", "none: the plugin", code(yaml)],
        ...(typescriptOnly
          ? [[`TypeScript, ${code(TYPESCRIPT_PACKAGE)} only`, code(TYPESCRIPT_PACKAGE), typescriptOnly]]
          : []),
      ],
    ),
  ];
}

/**
 * "### Names in each language": every field of the plugin's schema as
 * each SDK spells it, and every value of an enumeration it takes.
 * @param {Record<string, object>} inputs the schema's inputs, by name: an enumeration's type is theirs
 * @param {Record<string, object>} outputs the schema's outputs, those of the inputs' names among them
 */
export function namesSections(schema, inputs, outputs) {
  const faces = languageFaces(schema);
  const fields = [...Object.entries(inputs), ...Object.entries(outputs).filter(([key]) => !(key in inputs))];
  const members = fields.flatMap(([key, property]) => {
    const enumeration = enumerationOf(schema, property);
    return (enumeration?.members ?? []).map((entry) => [
      code(key),
      code(JSON.stringify(entry.value)),
      ...faces.map((face) => code(face.member(enumeration.name, entry.name))),
    ]);
  });
  return [
    "### Names in each language",
    "As TypeScript and YAML name each field above, and as the other SDKs spell it:",
    table(
      ["Field", ...faces.slice(1).map((face) => face.heading)],
      fields.map(([key, property]) => [code(key), ...faces.slice(1).map((face) => code(face.property(key, property)))]),
    ),
    ...(members.length > 0
      ? [
          "An enumeration's values: the value itself (YAML, and any SDK's string), or each SDK's constant:",
          table(["Field", "Value", ...faces.map((face) => face.heading)], members),
        ]
      : []),
  ];
}

/**
 * "## Example usage": the example of `description` (the schema's), each
 * language under its heading (Markdown has no tabs).
 * @param {string} name the example's source, scripts/sdk/examples/<name>.pp
 */
export function exampleSections(name, token, description) {
  const example = exampleIn(description);
  if (!example) throw new Error(`the schema's description of ${token} carries no example`);
  return [
    "## Example usage",
    `${example.title}. Written once in PCL ([${code(`${name}.pp`)}](../../scripts/sdk/examples/${name}.pp)) and converted by Pulumi's own program generators; the schema's description of ${code(token)} carries the same, which the Pulumi Registry and each SDK's doc comments show ([Every Pulumi language](../guides/languages.md)).`,
    ...EXAMPLE_LANGUAGES.flatMap(({ language, heading, fence }) => [
      `### ${heading}`,
      `\`\`\`${fence}\n${example.sources[language]}\n\`\`\``,
    ]),
  ];
}
