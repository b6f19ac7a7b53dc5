import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../scripts/engine.mjs";
import { typeScriptFiles } from "./support/sources";

// The package's layers, lowest first: a module may import from its own layer
// and those below it, never from one above. CONTRIBUTING.md explains the
// order; this test is how it is checked (`npx vitest run test/layers.test.ts`).
const LAYERS: readonly (readonly string[])[] = [
  ["api", "cli"],
  ["client", "receiver", "dns"],
  ["runtime"],
  ["resources"],
  ["functions", "registry.ts"],
  ["providerHost.ts"],
  ["providers"],
  ["tenant"],
  ["inventory"],
  ["discovery"],
  ["checkpoint"],
  ["recovery"],
  ["fleet"],
  ["index.ts"],
];

const source = join(projectRoot, "provider", "src");

/** The layer of a file of provider/src: its top folder's, or its own name's for a file at the top. */
function layerOf(file: string): number {
  const top = relative(source, file).split("/")[0] ?? "";
  const layer = LAYERS.findIndex((names) => names.includes(top));
  if (layer === -1) throw new Error(`${relative(source, file)} is in no layer: add "${top}" to LAYERS`);
  return layer;
}

/** The files of provider/src a module imports, requires or re-exports by relative path. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specifiers = [...text.matchAll(/(?:from|import|require\()\s*"(\.{1,2}\/[^"]*)"/g)].map(
    (match) => match[1] as string,
  );
  return specifiers.map((specifier) => {
    const target = resolve(dirname(file), specifier);
    return existsSync(`${target}.ts`) ? `${target}.ts` : join(target, "index.ts");
  });
}

describe("provider/src's layers", () => {
  const files = typeScriptFiles(source);

  it("put every module in a layer", () => {
    for (const file of files) expect(() => layerOf(file)).not.toThrow();
  });

  it("import downwards only", () => {
    const upward = files.flatMap((file) =>
      importsOf(file)
        .filter((target) => target.startsWith(source) && layerOf(target) > layerOf(file))
        .map((target) => `${relative(source, file)} imports ${relative(source, target)}, a higher layer`),
    );
    expect(upward).toEqual([]);
  });

  it("leave reading a checkpoint, spelling the type token and making a client to one module each", () => {
    // The checkpoint layer is the one reader of a stack's state; runtime/typeToken.ts the one spelling of our
    // tokens; runtime/config.ts the one way from configuration to a client (the client folder defines it).
    const owners: readonly { text: string; owners: readonly string[] }[] = [
      { text: "pending_operations", owners: ["checkpoint/deployment.ts"] },
      { text: "deployment.resources", owners: ["checkpoint/deployment.ts"] },
      { text: "pulumi-nodejs:dynamic/", owners: ["runtime/typeToken.ts"] },
      { text: "createClient(", owners: ["runtime/config.ts", "client/index.ts"] },
    ];
    const strays = files.flatMap((file) => {
      const name = relative(source, file);
      const text = readFileSync(file, "utf8");
      return owners
        .filter((owned) => !owned.owners.includes(name) && text.includes(owned.text))
        .map((owned) => `${name} spells "${owned.text}", which only ${owned.owners.join(" and ")} may`);
    });
    expect(strays).toEqual([]);
  });

  it("sees an upward import when there is one", () => {
    // The check itself: the fleet's runner imports the inventory, a lower layer, and not the other way round.
    const runner = join(source, "fleet", "runner.ts");
    const inventory = join(source, "inventory", "inventory.ts");
    expect(importsOf(runner).some((target) => layerOf(target) < layerOf(runner))).toBe(true);
    expect(layerOf(inventory)).toBeLessThan(layerOf(runner));
  });
});
