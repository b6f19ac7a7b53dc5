import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../scripts/project.mjs";
import { typeScriptFiles } from "./support/sources";

// Things one module of provider/src owns, spelled nowhere else. Who may
// import whom is .dependency-cruiser.cjs's (test/dependencies.test.ts).

const source = join(projectRoot, "provider", "src");

describe("provider/src's single owners", () => {
  const files = typeScriptFiles(source);

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
});
