import { domain } from "./resources/domain";
import { domainGroup } from "./resources/domainGroup";
import { domainVerification } from "./resources/domainVerification";
import { invitation } from "./resources/invitation";
import { organization } from "./resources/organization";
import { rfc2136Record } from "./resources/rfc2136Record";
import { subscription } from "./resources/subscription";
import { webhook } from "./resources/webhook";
import type { AnyResourceDefinition } from "./runtime/lifecycle";
import { providerModuleName } from "./runtime/providerModule";

/**
 * Every resource type of the package, one entry each, by its provider
 * module's name (`pulumi-dmarc-partner/providers/<name>`). The provider host,
 * the reference pages and recovery are built from this list, and
 * test/registry/registry.test.ts checks the package's files and exports
 * against it. A new resource type is one entry here, besides its own files:
 * its resource file, its three-line provider module, and its class exported
 * from the index (CONTRIBUTING.md, "Adding a resource type").
 */
export const resourceDefinitions = {
  organization,
  domainGroup,
  domain,
  domainVerification,
  webhook,
  subscription,
  invitation,
  rfc2136Record,
} as const;

export interface RegisteredType {
  typeName: string;
  /** `pulumi-dmarc-partner/providers/<module>`: what every resource of the type records as its provider. */
  providerModule: string;
  definition: AnyResourceDefinition;
}

export const registeredTypes: readonly RegisteredType[] = Object.entries(resourceDefinitions).map(
  ([name, definition]: [string, AnyResourceDefinition]) => {
    if (providerModuleName(definition.typeName) !== name)
      throw new Error(
        `registry: ${definition.typeName} must be registered as "${providerModuleName(definition.typeName)}"`,
      );
    return { typeName: definition.typeName, providerModule: `pulumi-dmarc-partner/providers/${name}`, definition };
  },
);

/** The definition of a resource type by its type name (`Organization`), for tools working on state (recovery). */
export function definitionOf(typeName: string): AnyResourceDefinition | undefined {
  return registeredTypes.find((entry) => entry.typeName === typeName)?.definition;
}
