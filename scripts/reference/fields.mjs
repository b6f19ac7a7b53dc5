// A zod object schema's fields as the rows of a reference table, read from
// zod's own JSON Schema of it: the page shows what the schema accepts, in the
// words of its `.describe()` texts, and nothing written beside it.

import { createRequire } from "node:module";
import { join } from "node:path";
import { projectRoot } from "../project.mjs";

// The provider's own zod: descriptions live in that copy's registry.
const { z } = createRequire(join(projectRoot, "provider", "package.json"))("zod");

/**
 * @typedef {object} Field
 * @property {string} name
 * @property {string} type e.g. `string`, `list of string`, `string or null`
 * @property {boolean} required
 * @property {unknown} [defaultValue] the value taken when the field is left out
 * @property {string} allowed what the schema allows beyond the type: values, lengths, counts, bounds
 * @property {string} description
 * @property {string} [nested] the key of the fields below this one (an object, or a list of objects): `setupRecord`, `domains[]`
 * @property {Field[]} [fields] those fields
 */

/**
 * The fields of an object schema, in its declared order.
 * @param {import("zod").ZodType} schema
 * @param {"input" | "output"} io the side of transforms and defaults to describe
 * @returns {Field[]}
 */
export function fieldsOf(schema, io) {
  return fieldsOfNode(z.toJSONSchema(schema, { io, unrepresentable: "any" }));
}

/** The JSON Schema's description of the whole object, or "". */
export function descriptionOf(schema) {
  return z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }).description ?? "";
}

function fieldsOfNode(node) {
  const required = new Set(node.required ?? []);
  return Object.entries(node.properties ?? {}).map(([name, property]) => {
    const object = objectOf(property);
    return {
      name,
      type: typeOf(property),
      required: required.has(name),
      ...("default" in property ? { defaultValue: property.default } : {}),
      allowed: allowedOf(property),
      description: property.description ?? "",
      ...(object ? { nested: property.type === "array" ? `${name}[]` : name, fields: fieldsOfNode(object) } : {}),
    };
  });
}

/** The object whose fields a field holds: itself, or the items of a list. */
function objectOf(node) {
  if (node.type === "object" && node.properties) return node;
  if (node.type === "array" && node.items?.type === "object" && node.items.properties) return node.items;
  return undefined;
}

const TYPE_NAMES = { string: "string", boolean: "boolean", integer: "integer", number: "number", null: "null" };

function typeOf(node) {
  if (node.anyOf) return node.anyOf.map(typeOf).join(" or ");
  if (Array.isArray(node.type)) return node.type.map((type) => typeOf({ ...node, type })).join(" or ");
  if (node.type === "array") return `list of ${node.items ? typeOf(node.items) : "anything"}`;
  if (node.type === "object") {
    if (node.properties) return "object";
    const values = node.additionalProperties;
    return `map of string to ${values && values !== true ? typeOf(values) : "anything"}`;
  }
  return TYPE_NAMES[node.type] ?? "anything";
}

const code = (text) => `\`${text}\``;
const plural = (count, one, many) => `${count} ${count === 1 ? one : many}`;

/** A range of counts: `1 to 128 characters`, `at least 1 item`, `at most 5 items`. */
function range(min, max, one, many) {
  if (min !== undefined && max !== undefined) return `${min} to ${plural(max, one, many)}`;
  if (min !== undefined) return `at least ${plural(min, one, many)}`;
  if (max !== undefined) return `at most ${plural(max, one, many)}`;
  return undefined;
}

function allowedOf(node) {
  const parts = [
    node.enum?.map((value) => code(JSON.stringify(value))).join(", "),
    node.const !== undefined && code(JSON.stringify(node.const)),
    range(node.minLength, node.maxLength, "character", "characters"),
    range(node.minItems, node.maxItems, "item", "items"),
    node.minimum !== undefined && `at least ${node.minimum}`,
    node.maximum !== undefined && node.maximum < Number.MAX_SAFE_INTEGER && `at most ${node.maximum}`,
    node.pattern && `matches ${code(node.pattern)}`,
  ];
  if (node.type === "array" && node.items && !objectOf(node)) {
    const items = allowedOf(node.items);
    if (items) parts.push(`each: ${items}`);
  }
  if (node.anyOf) parts.push(...node.anyOf.map(allowedOf));
  return parts.filter(Boolean).join("; ");
}
