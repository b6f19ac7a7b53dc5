import type * as pulumi from "@pulumi/pulumi";
import type { DynamicProviderHost } from "./host";

/** The input (and output) in which every dynamic resource records its provider module. */
export const PROVIDER_KEY = "__provider";

/** The package's module of a resource type's provider: `Domain` → `domain`, `DomainGroup` → `domainGroup`. */
export function providerModuleName(typeName: string): string {
  return typeName.charAt(0).toLowerCase() + typeName.slice(1);
}

/**
 * The provider object a `pulumi-dmarc-partner/providers/<type>` module
 * exports: it hands every call over to `host`, one per process, so every
 * resource type shares the HTTP pool, token cache and pacing.
 */
export function dynamicProviderFor(host: DynamicProviderHost, typeName: string): pulumi.dynamic.ResourceProvider {
  return {
    configure: (request) => host.configure(request),
    check: (olds, news) => host.check(typeName, olds, news),
    diff: (id, olds, news) => host.diff(typeName, id, olds, news),
    create: (inputs) => host.create(typeName, inputs),
    read: (id, props) => host.read(typeName, id, props),
    update: (id, olds, news) => host.update(typeName, id, olds, news),
    delete: (id, props) => host.delete(typeName, id, props),
  };
}

/**
 * The `__provider` text every resource of a type records: a module whose
 * `handler` loads the type's provider module by package name. It is written
 * here rather than by Pulumi's closure serializer so that it is the same
 * short text wherever the package is installed or linked from. The dynamic
 * provider process resolves the package from its working directory (the
 * Pulumi project), where the partner's `npm install` put it. States recorded
 * by earlier versions hold other forms; the package's exports map keeps
 * serving them (CHANGELOG.md, 0.2.0).
 */
export function providerSource(typeName: string): string {
  return `exports.handler=()=>require("pulumi-dmarc-partner/providers/${providerModuleName(typeName)}");`;
}
