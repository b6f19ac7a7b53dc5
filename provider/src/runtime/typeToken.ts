// The type tokens of this package's resources: dynamic provider resources
// named `dmarc:<Type>`, so previews, policies and tools reading state can
// tell them apart. The one place the token's shape is spelled.

/** Module part of every type token: `pulumi-nodejs:dynamic/dmarc:<Type>`. */
const TYPE_MODULE = "dmarc";

const TYPE_PREFIX = `pulumi-nodejs:dynamic/${TYPE_MODULE}:`;

/** `pulumi-nodejs:dynamic/dmarc:Organization` for `Organization`. */
export function typeToken(typeName: string): string {
  return `${TYPE_PREFIX}${typeName}`;
}

/** `Organization` for `pulumi-nodejs:dynamic/dmarc:Organization`; undefined for other packages' types. */
export function dmarcTypeName(token: string): string | undefined {
  return token.startsWith(TYPE_PREFIX) ? token.slice(TYPE_PREFIX.length) : undefined;
}
