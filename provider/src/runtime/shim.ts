import type * as pulumi from "@pulumi/pulumi";
import type { DynamicProviderHost } from "./host";

/** The input (and output) in which every dynamic resource records its provider module. */
export const PROVIDER_KEY = "__provider";

let loadedHost: DynamicProviderHost | undefined;

/** Loaded on the first call: the resource classes load this module in the program too, where no host is needed. */
function host(): DynamicProviderHost {
  loadedHost ??= (require("../providerHost") as typeof import("../providerHost")).dynamicProviderHost;
  return loadedHost;
}

/**
 * The provider object each `pulumi-dmarc-partner/providers/<type>` module
 * exports: it hands every call over to the package's one host.
 */
export function dynamicProviderFor(typeName: string): pulumi.dynamic.ResourceProvider {
  return {
    configure: (request) => host().configure(request),
    check: (olds, news) => host().check(typeName, olds, news),
    diff: (id, olds, news) => host().diff(typeName, id, olds, news),
    create: (inputs) => host().create(typeName, inputs),
    read: (id, props) => host().read(typeName, id, props),
    update: (id, olds, news) => host().update(typeName, id, olds, news),
    delete: (id, props) => host().delete(typeName, id, props),
  };
}

/**
 * The `__provider` text every resource of a type records, written here rather
 * than by Pulumi's closure serializer: a module whose `handler` loads the
 * type's provider module by package name (about 70 bytes, stored in inputs
 * and outputs). The serializer would wrap the same `require` in some 280
 * bytes of boilerplate where the package is installed, and serialize every
 * function of the shim from a linked checkout. The dynamic provider process
 * resolves the package from its working directory (the Pulumi project),
 * where a partner's `npm install` put it.
 *
 * States recorded earlier hold other forms: 0.1.0 the serialized shim,
 * development builds before 0.2.0 the serializer's `require` of
 * `providers/<type>` or, where Pulumi could not find the package's manifest
 * (pnpm's layout), of `dist/providers/<type>.js`. The exports map keeps
 * serving both paths.
 */
export function providerSource(typeName: string): string {
  const moduleName = typeName.charAt(0).toLowerCase() + typeName.slice(1);
  return `exports.handler=()=>require("pulumi-dmarc-partner/providers/${moduleName}");`;
}
