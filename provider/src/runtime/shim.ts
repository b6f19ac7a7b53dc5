import type * as pulumi from "@pulumi/pulumi";

/**
 * The provider object Pulumi serializes into every resource's state as
 * `__provider`. It holds no code of ours: at call time it loads the installed
 * package by name and hands over to its host, so upgrading the package
 * changes behaviour without touching the state.
 *
 * Each type's object is the whole `module.exports` of its own module,
 * `pulumi-dmarc-partner/providers/<type>` (see providers/). Where the package
 * is installed under node_modules, Pulumi's closure serializer then records a
 * plain `require("pulumi-dmarc-partner/providers/<type>")` of about 250 bytes
 * instead of these functions; from a linked checkout it serializes the
 * functions themselves, which works the same and is larger.
 * When Pulumi cannot find the package's manifest from where it is installed
 * itself (a layout such as pnpm's), it records the file path instead,
 * `pulumi-dmarc-partner/dist/providers/<type>.js`: the exports map serves that
 * path too, so both forms load, and must keep doing so for recorded states.
 * The package is resolved from the provider process's working directory (the
 * Pulumi project), where a partner's `npm install` put it.
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

/** The serialized provider of a type: its module's exports, loaded once, so Pulumi serializes it once per type. */
export function providerModuleOf(typeName: string): pulumi.dynamic.ResourceProvider {
  const moduleName = typeName.charAt(0).toLowerCase() + typeName.slice(1);
  return require(`../providers/${moduleName}`);
}
