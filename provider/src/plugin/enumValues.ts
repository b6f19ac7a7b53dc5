// An enumeration's values as the plugin's schema gives them: each with the
// name every SDK makes its constant from, and its meaning where the field's
// description gives one, so the zod schema stays the one source of both.

/** A value of an enumeration: each SDK names its constant after `name` (Go's `WebhookEventDomainVerified`, Python's `DOMAIN_VERIFIED`). */
export interface EnumValueSpec {
  value: string;
  name: string;
  description?: string;
}

/** Upper camel case of a field's name: `setupRecord` → `SetupRecord`. */
export const pascal = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);

/** One key per list of values, the same for the same values in the same order. */
export const valuesKey = (values: readonly unknown[]) => values.join("\0");

/**
 * A value's name: the upper camel case of its words, their capitals kept
 * (`domain.verified` → `DomainVerified`, `no_access` → `NoAccess`, `CNAME`).
 */
const enumValueName = (value: string) =>
  value
    .split(/[^A-Za-z0-9]+/)
    .filter((word) => word !== "")
    .map(pascal)
    .join("");

/** Each value's meaning, from a field's description that gives it as "`<value>`: <meaning>." (Organization's `onDelete`). */
function meaningsIn(fieldDescription: string): Map<string, string> {
  const sentences = fieldDescription.matchAll(/`([^`]+)`: ([^`]+?\.)(?=\s+`|\s*$)/g);
  return new Map([...sentences].map(([, value, meaning]) => [value as string, pascal(meaning as string)]));
}

/**
 * Each value of the enumeration `typeName` with its name and its meaning
 * where `fieldDescription` gives one; two values of one name would be one
 * constant, so they are refused.
 */
export function enumValues(values: readonly string[], typeName: string, fieldDescription = ""): EnumValueSpec[] {
  const meanings = meaningsIn(fieldDescription);
  const entries = values.map((value) => {
    const meaning = meanings.get(value);
    return { value, name: enumValueName(value), ...(meaning === undefined ? {} : { description: meaning }) };
  });
  const names = entries.map((entry) => entry.name);
  if (new Set(names).size !== names.length)
    throw new Error(`the values of ${typeName} make the same constant name twice: ${names.join(", ")}`);
  return entries;
}
