import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalWorkspace } from "@pulumi/pulumi/automation";
import { afterAll, describe, expect, it } from "vitest";
import { storedState, uniqueStackName, useEngine } from "../support/engine";

// A Pulumi YAML program, as `pulumi up` runs it from a folder whose
// Pulumi.yaml says `runtime: yaml`: the engine starts pulumi-language-yaml,
// which scripts/engine/ builds beside it, and the host evaluates config,
// builtin functions and outputs itself. No resource but the stack, so no
// provider plugin.
const project = `name: engine-yaml
runtime: yaml
config:
  who:
    type: string
  token:
    type: string
    secret: true
variables:
  greeting:
    fn::join:
      - ", "
      - - hello
        - \${who}
outputs:
  greeting: \${greeting}
  token: \${token}
  where: \${pulumi.project}/\${pulumi.stack}
`;

const folder = mkdtempSync(join(tmpdir(), "dmarc-engine-yaml-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe("YAML language host", () => {
  it("runs a Pulumi YAML program through up, a preview expecting no changes and destroy", async () => {
    writeFileSync(join(folder, "Pulumi.yaml"), project);
    const envVars = await useEngine();
    const stack = await LocalWorkspace.createStack(
      { stackName: uniqueStackName("engine-yaml"), workDir: folder },
      { envVars },
    );
    await stack.setAllConfig({ who: { value: "yaml" }, token: { value: "s3cr3t-yaml", secret: true } });
    try {
      const up = await stack.up();
      expect(up.summary.result).toBe("succeeded");
      expect(up.summary.resourceChanges).toEqual({ create: 1 });
      expect(up.outputs.greeting).toEqual({ value: "hello, yaml", secret: false });
      expect(up.outputs.token).toEqual({ value: "s3cr3t-yaml", secret: true });
      expect(up.outputs.where?.value).toBe(`engine-yaml/${stack.name}`);
      // The host next to the engine, not a copy found elsewhere on PATH.
      expect(up.stderr).not.toContain("from $PATH");
      expect(await storedState(stack)).not.toContain("s3cr3t-yaml");

      const preview = await stack.preview({ expectNoChanges: true });
      expect(preview.changeSummary).toEqual({ same: 1 });
    } finally {
      const destroyed = await stack.destroy();
      expect(destroyed.summary.resourceChanges).toEqual({ delete: 1 });
      await stack.workspace.removeStack(stack.name);
    }
  }, 240_000);
});
