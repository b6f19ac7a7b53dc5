import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import * as dmarc from "pulumi-dmarc-partner";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../../scripts/project.mjs";

// The registry (provider/src/registry.ts) is the one list of resource types:
// the provider modules, the package's exports and index, and the provider
// host must each know every type it lists, and nothing else.

const requireFromRoot = createRequire(join(projectRoot, "package.json"));
const names = Object.keys(dmarc.resourceDefinitions);
const providerSources = join(projectRoot, "provider", "src", "providers");

describe("the resource registry", () => {
  it("lists every resource type of the package once, DomainVerification included", () => {
    const typeNames = Object.values(dmarc.resourceDefinitions).map((definition) => definition.typeName);
    expect(new Set(typeNames).size).toBe(typeNames.length);
    expect(typeNames.sort()).toEqual(
      [
        "Domain",
        "DomainGroup",
        "DomainVerification",
        "Invitation",
        "Organization",
        "Rfc2136Record",
        "Subscription",
        "Webhook",
      ].sort(),
    );
  });

  it("has one provider module per type, and no other", () => {
    const files = readdirSync(providerSources).map((file) => file.replace(/\.ts$/, ""));
    expect(files.sort()).toEqual([...names].sort());
  });

  it.each(names)("serves %s's provider from the package name its resources record", async (name) => {
    const definition = dmarc.resourceDefinitions[name as keyof typeof dmarc.resourceDefinitions];
    const provider = requireFromRoot(`pulumi-dmarc-partner/providers/${name}`) as {
      configure: (request: { config: { get: (key: string) => string | undefined } }) => Promise<void>;
      check: (olds: object, news: object) => Promise<{ failures?: { reason: string }[] }>;
    };
    // Settings that pass the provider's own check; nothing is sent anywhere.
    const settings: Record<string, string> = {
      "dmarc:baseUrl": "http://127.0.0.1:9",
      "dmarc:clientId": "registry-test",
      "dmarc:clientSecret": "registry-test",
      "dmarc:partnerId": "partner-registry-test",
    };
    await provider.configure({ config: { get: (key) => settings[key] } });
    // An empty declaration is refused by this type's own schema: the module is wired to its type.
    const checked = await provider.check({}, {});
    expect(checked.failures?.[0]?.reason).toMatch(new RegExp(`^${definition.typeName} input "`));
  });

  it.each(names)("exports %s's resource class from the index under its type name", (name) => {
    const definition = dmarc.resourceDefinitions[name as keyof typeof dmarc.resourceDefinitions];
    const resourceClass = (dmarc as unknown as Record<string, unknown>)[definition.typeName];
    expect(typeof resourceClass).toBe("function");
    expect((resourceClass as { name: string }).name).toBe(definition.typeName);
  });

  it("maps the providers' package path in the exports", () => {
    const manifest = JSON.parse(readFileSync(join(projectRoot, "provider", "package.json"), "utf8")) as {
      exports: Record<string, string>;
    };
    expect(manifest.exports["./providers/*"]).toBe("./dist/providers/*.js");
    for (const name of names)
      expect(existsSync(join(projectRoot, "provider", "dist", "providers", `${name}.js`))).toBe(true);
  });
});
