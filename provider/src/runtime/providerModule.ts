/** The input (and output) in which every dynamic resource records its provider module. */
export const PROVIDER_KEY = "__provider";

/** The package's module of a resource type's provider: `Domain` → `domain`, `DomainGroup` → `domainGroup`. */
export function providerModuleName(typeName: string): string {
  return typeName.charAt(0).toLowerCase() + typeName.slice(1);
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

/**
 * This package's version, from its manifest beside dist/: what the fleet's digest and the plugin report.
 * Required rather than read from disk, so that the plugin's executable carries it in its bundle.
 */
export function packageVersion(): string {
  return (require("../../package.json") as { version: string }).version;
}
