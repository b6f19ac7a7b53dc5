import { Domain, domain } from "./resources/domain";
import { DomainGroup, domainGroup } from "./resources/domainGroup";
import { DomainVerification, domainVerification } from "./resources/domainVerification";
import { Invitation, invitation } from "./resources/invitation";
import { Organization, organization } from "./resources/organization";
import { Rfc2136Record, rfc2136Record } from "./resources/rfc2136Record";
import { Subscription, subscription } from "./resources/subscription";
import { Webhook, webhook } from "./resources/webhook";
import type { AnyResourceDefinition } from "./runtime/lifecycle";
import { providerModuleName } from "./runtime/providerModule";

/**
 * Every resource type of the package, by its provider module's name
 * (`pulumi-dmarc-partner/providers/<name>`). The provider host, the package
 * index and the provider modules are built from this list, and
 * test/registry/registry.test.ts checks the package's files and exports against it: a
 * new resource type is one entry here plus its resource file and its
 * three-line provider module.
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

/** The resource classes, by the same names as {@link resourceDefinitions}. */
export const resourceClasses = {
  organization: Organization,
  domainGroup: DomainGroup,
  domain: Domain,
  domainVerification: DomainVerification,
  webhook: Webhook,
  subscription: Subscription,
  invitation: Invitation,
  rfc2136Record: Rfc2136Record,
} as const;

export type ResourceModuleName = keyof typeof resourceDefinitions;

export interface RegisteredType {
  typeName: string;
  /** `pulumi-dmarc-partner/providers/<module>`: what every resource of the type records as its provider. */
  providerModule: string;
  definition: AnyResourceDefinition;
  resourceClass: (typeof resourceClasses)[ResourceModuleName];
}

export const registeredTypes: readonly RegisteredType[] = (
  Object.keys(resourceDefinitions) as ResourceModuleName[]
).map((name) => {
  const definition: AnyResourceDefinition = resourceDefinitions[name];
  if (providerModuleName(definition.typeName) !== name)
    throw new Error(
      `registry: ${definition.typeName} must be registered as "${providerModuleName(definition.typeName)}"`,
    );
  return {
    typeName: definition.typeName,
    providerModule: `pulumi-dmarc-partner/providers/${name}`,
    definition,
    resourceClass: resourceClasses[name],
  };
});

/** The definition of a resource type by its type name (`Organization`), for tools working on state (recovery). */
export function definitionOf(typeName: string): AnyResourceDefinition | undefined {
  return registeredTypes.find((entry) => entry.typeName === typeName)?.definition;
}
