import type * as pulumi from "@pulumi/pulumi";

/**
 * The provider object each `pulumi-dmarc-partner/providers/<type>` module
 * exports. It holds no code of ours: at call time it loads the installed
 * package by name and hands over to its host, so upgrading the package
 * changes behaviour without touching the state.
 */
export function dynamicProviderFor(typeName: string): pulumi.dynamic.ResourceProvider {
  return {
    configure: (request) => require("pulumi-dmarc-partner").dynamicProviderHost.configure(request),
    check: (olds, news) => require("pulumi-dmarc-partner").dynamicProviderHost.check(typeName, olds, news),
    diff: (id, olds, news) => require("pulumi-dmarc-partner").dynamicProviderHost.diff(typeName, id, olds, news),
    create: (inputs) => require("pulumi-dmarc-partner").dynamicProviderHost.create(typeName, inputs),
    read: (id, props) => require("pulumi-dmarc-partner").dynamicProviderHost.read(typeName, id, props),
    update: (id, olds, news) => require("pulumi-dmarc-partner").dynamicProviderHost.update(typeName, id, olds, news),
    delete: (id, props) => require("pulumi-dmarc-partner").dynamicProviderHost.delete(typeName, id, props),
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
