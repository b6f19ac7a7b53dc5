import type * as pulumi from "@pulumi/pulumi";

const shims = new Map<string, pulumi.dynamic.ResourceProvider>();

/**
 * The provider object Pulumi serializes into every resource's state as
 * `__provider`. It holds no code of ours: at call time it loads the installed
 * package by name and hands over, so the state stays small and upgrading the
 * package changes behaviour without touching the state.
 * The package is resolved from the provider process's working directory (the
 * Pulumi project), where a partner's `npm install` put it.
 * One object per type: Pulumi caches serialization by object, so a fleet of
 * hundreds of resources serializes six closures instead of one per resource.
 */
export function dynamicProviderFor(typeName: string): pulumi.dynamic.ResourceProvider {
  const existing = shims.get(typeName);
  if (existing) return existing;
  const shim: pulumi.dynamic.ResourceProvider = {
    configure: (request) => require("pulumi-dmarc-partner").dynamicProviderHost.configure(request),
    check: (olds, news) => require("pulumi-dmarc-partner").dynamicProviderHost.check(typeName, olds, news),
    diff: (id, olds, news) => require("pulumi-dmarc-partner").dynamicProviderHost.diff(typeName, id, olds, news),
    create: (inputs) => require("pulumi-dmarc-partner").dynamicProviderHost.create(typeName, inputs),
    read: (id, props) => require("pulumi-dmarc-partner").dynamicProviderHost.read(typeName, id, props),
    update: (id, olds, news) => require("pulumi-dmarc-partner").dynamicProviderHost.update(typeName, id, olds, news),
    delete: (id, props) => require("pulumi-dmarc-partner").dynamicProviderHost.delete(typeName, id, props),
  };
  shims.set(typeName, shim);
  return shim;
}
