// The plugin's package name and type tokens: `dmarc:index:<Type>`. The
// package is named as the `dmarc:*` configuration namespace, so a stack's
// existing settings configure the plugin's default provider unchanged.

import { CONFIG_NAMESPACE } from "../runtime/config";

export const PACKAGE_NAME = CONFIG_NAMESPACE;

const TYPE_PREFIX = `${PACKAGE_NAME}:index:`;

/** `dmarc:index:Organization` for `Organization`, `dmarc:index:getPriceId` for `getPriceId`. */
export function typeToken(name: string): string {
  return `${TYPE_PREFIX}${name}`;
}

/** The type name in a resource's URN (`urn:pulumi:<stack>::<project>::<parent type>$dmarc:index:Domain::<name>`), or undefined for other packages'. */
export function typeNameOfUrn(urn: string): string | undefined {
  const type = urn.split("::")[2]?.split("$").pop() ?? "";
  return type.startsWith(TYPE_PREFIX) ? type.slice(TYPE_PREFIX.length) : undefined;
}

/** `getPriceId` for the token `dmarc:index:getPriceId`, or undefined for other packages'. */
export function nameOfToken(token: string): string | undefined {
  return token.startsWith(TYPE_PREFIX) ? token.slice(TYPE_PREFIX.length) : undefined;
}
