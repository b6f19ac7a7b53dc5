// How each language spells what the plugin's schema names: its package, a
// resource's class, a function, an input, an enumeration's member. The
// rules are those of Pulumi's code generators (Python's snake case, Go's
// `New<Type>` and `<Enum><Member>` constants, C#'s renamed members);
// test/docs/examples.test.ts finds every name a page gives in the SDKs
// generated from the schema, so a rule that drifts from the generators fails.

/** `organizationId` → `organization_id`, `TXT` → `txt`, as Pulumi's Python generator writes a name. */
function snakeCase(name) {
  return name
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase();
}

const pascal = (name) => name.charAt(0).toUpperCase() + name.slice(1);

/**
 * Each language of the plugin's SDKs (and YAML), by the schema's `language`
 * settings: its heading, its package, and how it spells a resource's class,
 * a function, an input (`property`, given the schema's property for C#'s
 * renamings) and an enumeration's member (given the type's name and the
 * member's schema name; YAML and TypeScript also take the value itself).
 */
export function languageFaces(schema) {
  const { nodejs, python, go, csharp } = schema.language;
  const dotnet = `${csharp.rootNamespace}.${pascal(schema.name)}`;
  return [
    {
      heading: "TypeScript",
      package: nodejs.packageName,
      resource: (name) => `dmarc.${name}`,
      function: (name) => `dmarc.${name}`,
      property: (key) => key,
      member: (type, name) => `dmarc.${type}.${name}`,
    },
    {
      heading: "Python",
      package: python.packageName,
      resource: (name) => `${python.packageName}.${name}`,
      function: (name) => `${python.packageName}.${snakeCase(name)}`,
      property: (key) => snakeCase(key),
      member: (type, name) => `${python.packageName}.${type}.${snakeCase(name).toUpperCase()}`,
    },
    {
      heading: "Go",
      package: go.importBasePath,
      resource: (name) => `dmarc.New${name}`,
      function: (name) => `dmarc.${pascal(name)}`,
      property: (key) => pascal(key),
      member: (type, name) => `dmarc.${type}${name}`,
    },
    {
      heading: "C#",
      package: dotnet,
      resource: (name) => `${dotnet}.${name}`,
      function: (name) => `${dotnet}.${pascal(name)}.Invoke`,
      property: (key, property) => property?.language?.csharp?.name ?? pascal(key),
      member: (type, name) => `${dotnet}.${type}.${name}`,
    },
  ];
}

/** The named enumeration a schema property takes (itself, its items', or beside `string`), or undefined. */
export function enumerationOf(schema, property) {
  const reference = [property, property?.items, ...(property?.oneOf ?? []), ...(property?.items?.oneOf ?? [])]
    .map((node) => node?.$ref)
    .find((ref) => ref?.startsWith("#/types/"));
  const token = reference?.slice("#/types/".length);
  const type = token && schema.types[token];
  return type?.enum ? { name: token.slice(token.lastIndexOf(":") + 1), members: type.enum } : undefined;
}
