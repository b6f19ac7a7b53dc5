import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { projectRoot } from "../../scripts/engine.mjs";
import { ownProcessReasons, processSharingFiles } from "../support/processSharing";

// Which test files share a process (test/support/processSharing.ts): a file
// let into a shared process that changes what is global, or runs the engine
// there, would make the files after it pass or fail by the order they ran in.

describe("test files sharing a process", () => {
  const work = mkdtempSync(join(projectRoot, ".cache", "process-sharing-"));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  const write = (files: Record<string, string>) => {
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(join(work, name, ".."), { recursive: true });
      writeFileSync(join(work, name), text);
    }
  };

  it("keeps files of their own process where they or a helper change what is global or run the engine", () => {
    write({
      "test/pure.test.ts": 'import { parse } from "../provider/src/parse";\nimport { table } from "./support/table";\n',
      "test/support/table.ts": "export const table = [1, 2];\n",
      "test/mocks.test.ts": "pulumi.runtime.setMocks({});\n",
      "test/env.test.ts": 'import { helper } from "./support/env";\n',
      "test/support/env.ts": 'process.env["DMARC_X"] = "1";\n',
      "test/engine.test.ts": 'import { useStack } from "./support/stack.js";\n',
      "test/support/stack.ts": 'import { LocalWorkspace } from "@pulumi/pulumi/automation";\n',
      "provider/src/parse.ts": 'import { LocalWorkspace } from "@pulumi/pulumi/automation";\n',
      "test/reads.test.ts": 'if (process.env.CI === "true") {}\n',
    });
    expect(processSharingFiles(work, ["test"])).toEqual(["test/pure.test.ts", "test/reads.test.ts"]);
    expect(ownProcessReasons(work, "test/env.test.ts")).toEqual(["test/support/env.ts changes what is global"]);
    expect(ownProcessReasons(work, "test/engine.test.ts")).toEqual([
      "test/support/stack.ts runs the engine in the test's process",
    ]);
    expect(ownProcessReasons(work, "test/mocks.test.ts")).toEqual(["test/mocks.test.ts changes what is global"]);
  });

  it("gives the suite's mock, environment and engine tests a process of their own", () => {
    const sharing = processSharingFiles(projectRoot, ["test", "examples"]);
    expect(sharing).toContain("test/client/wire.test.ts");
    for (const own of ["test/tenant/args.test.ts", "test/dns/record.test.ts", "test/fleet/drift.test.ts"]) {
      expect(sharing).not.toContain(own);
    }
  });
});
