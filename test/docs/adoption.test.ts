import { describe, expect, it } from "vitest";
import { hostWithSettings } from "../../provider/src/providerHost";
import { registeredTypes } from "../../provider/src/registry";
import { readDoc } from "./markdown";

// Which resources take `importId` (adoption), as the pages say it and as
// the provider host checks it: a page that leaves a type out of adoption,
// or a type the host stops adopting, fails here.

const PAGES = ["docs/lifecycle.md", "docs/guides/import-and-drift.md"] as const;

/** Settings the host's check accepts; nothing is sent anywhere. */
const SETTINGS = {
  baseUrl: "http://127.0.0.1:9",
  clientId: "adoption-docs",
  clientSecret: "adoption-docs",
  partnerId: "partner-adoption-docs",
};

/** The types whose resources take no `importId`: the host does not check that input for them. */
async function typesWithoutImportId(): Promise<string[]> {
  const host = hostWithSettings(SETTINGS);
  const without = await Promise.all(
    registeredTypes.map(async ({ typeName }) => {
      // An empty id is refused naming the input by every type that takes it.
      const checked = await host.check(typeName, {}, { importId: "" });
      return checked.failures?.some((failure) => failure.property === "importId") ? [] : [typeName];
    }),
  );
  return without.flat();
}

/** The types a page says take no `importId`: "every resource but `X` takes `importId`", or a section's "no `importId`". */
function typesSaidWithoutImportId(text: string): string[] {
  const excepted = [...text.matchAll(/every resource but ((?:`\w+`(?:,? (?:and )?)?)+) takes `importId`/gi)].flatMap(
    (match) => [...(match[1] ?? "").matchAll(/`(\w+)`/g)].map((name) => name[1] ?? ""),
  );
  const sections = text
    .split(/^## /m)
    .filter((section) => /\bno `importId`/.test(section))
    .map((section) => section.split(/\s/)[0] ?? "");
  return [...new Set([...excepted, ...sections])].sort();
}

describe("the adoption list of the docs", () => {
  it("reads a page's exceptions, in the rule and in a type's section", () => {
    const page =
      "- **Adoption.** Every resource but `Webhook` takes `importId`.\n\n## Domain (x)\n\nId; no `importId`.\n";
    expect(typesSaidWithoutImportId(page)).toEqual(["Domain", "Webhook"]);
  });

  it.each(PAGES)("names in %s exactly the types the provider host adopts", async (page) => {
    expect(typesSaidWithoutImportId(readDoc(page))).toEqual(await typesWithoutImportId());
  });

  it("states the rule on the lifecycle page", () => {
    expect(readDoc("docs/lifecycle.md")).toMatch(/\*\*Adoption\.\*\* Every resource (but .* )?takes `importId`/);
  });
});
