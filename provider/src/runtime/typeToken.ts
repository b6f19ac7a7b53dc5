// The type tokens of this package's resources, the one place their shapes
// are spelled: as dynamic provider resources, `pulumi-nodejs:dynamic/dmarc:<Type>`,
// so previews, policies and tools reading state can tell them apart; and as
// the provider plugin's, `dmarc:index:<Type>` (the plugin's package is named
// as the configuration namespace).

import { CONFIG_NAMESPACE } from "./config";

/** Module part of every type token: `pulumi-nodejs:dynamic/dmarc:<Type>`. */
const TYPE_MODULE = "dmarc";

const TYPE_PREFIX = `pulumi-nodejs:dynamic/${TYPE_MODULE}:`;

/** The provider plugin's package name. */
export const PLUGIN_PACKAGE = CONFIG_NAMESPACE;

const PLUGIN_TYPE_PREFIX = `${PLUGIN_PACKAGE}:index:`;

/** `pulumi-nodejs:dynamic/dmarc:Organization` for `Organization`. */
export function typeToken(typeName: string): string {
  return `${TYPE_PREFIX}${typeName}`;
}

/** `Organization` for `pulumi-nodejs:dynamic/dmarc:Organization`; undefined for other packages' types. */
export function dmarcTypeName(token: string): string | undefined {
  return token.startsWith(TYPE_PREFIX) ? token.slice(TYPE_PREFIX.length) : undefined;
}

/** The plugin's token of a resource, component or function: `dmarc:index:Organization`, `dmarc:index:getPriceId`. */
export function pluginTypeToken(name: string): string {
  return `${PLUGIN_TYPE_PREFIX}${name}`;
}

/** `getPriceId` for the plugin's token `dmarc:index:getPriceId`; undefined for other packages'. */
export function pluginTypeName(token: string): string | undefined {
  return token.startsWith(PLUGIN_TYPE_PREFIX) ? token.slice(PLUGIN_TYPE_PREFIX.length) : undefined;
}
