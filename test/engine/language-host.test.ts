import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LocalWorkspace, type Stack } from "@pulumi/pulumi/automation";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../../scripts/project.mjs";
import { uniqueStackName, useEngine } from "../support/engine";

// A local program, as `pulumi up` runs it from a folder with a Pulumi.yaml:
// the engine starts the Node.js language host (the official one, or ours from
// scripts/engine/language-host/nodejs), which runs index.ts through @pulumi/pulumi's run
// script and its TypeScript support. Inline programs never reach that host.
const program = `import * as pulumi from "@pulumi/pulumi";

const greetingProvider: pulumi.dynamic.ResourceProvider = {
  async create(inputs) {
    return { id: \`greeting-\${inputs.name}\`, outs: { ...inputs, message: \`hello \${inputs.name}\` } };
  },
};

class Greeting extends pulumi.dynamic.Resource {
  declare readonly message: pulumi.Output<string>;
  constructor(name: string, args: { name: pulumi.Input<string> }) {
    super(greetingProvider, name, { ...args, message: undefined }, {}, "langhost", "Greeting");
  }
}

const config = new pulumi.Config();
export const message = new Greeting("greeting", { name: config.require("who") }).message;
export const token = config.requireSecret("token");
export const where = \`\${pulumi.getProject()}/\${pulumi.getStack()}\`;
`;

/** A project folder of its own under .cache/, with node_modules linked to the project's. */
function localProject(name: string, source: string): string {
  const folder = join(projectRoot, ".cache", "projects", name);
  mkdirSync(folder, { recursive: true });
  const modules = join(folder, "node_modules");
  if (!existsSync(modules)) symlinkSync(join(projectRoot, "node_modules"), modules, "dir");
  writeFileSync(join(folder, "Pulumi.yaml"), `name: ${name}\nruntime: nodejs\n`);
  writeFileSync(join(folder, "package.json"), `${JSON.stringify({ name, private: true }, null, 2)}\n`);
  writeFileSync(join(folder, "index.ts"), source);
  return folder;
}

async function localStack(name: string, source: string): Promise<Stack> {
  const envVars = await useEngine();
  return LocalWorkspace.createStack(
    { stackName: uniqueStackName(name), workDir: localProject(name, source) },
    { envVars },
  );
}

describe("Node.js language host", () => {
  it("runs a local TypeScript program through up, an empty preview and destroy", async () => {
    const stack = await localStack("language-host-local", program);
    await stack.setAllConfig({ who: { value: "local" }, token: { value: "s3cr3t", secret: true } });
    try {
      const up = await stack.up();
      expect(up.summary.result).toBe("succeeded");
      expect(up.summary.resourceChanges).toEqual({ create: 2 });
      expect(up.outputs.message).toEqual({ value: "hello local", secret: false });
      // Config and secret keys reach the program; secrets stay secret.
      expect(up.outputs.token).toEqual({ value: "s3cr3t", secret: true });
      expect(up.outputs.where?.value).toBe(`language-host-local/${stack.name}`);

      const preview = await stack.preview();
      expect(preview.changeSummary).toEqual({ same: 2 });
    } finally {
      const destroyed = await stack.destroy();
      expect(destroyed.summary.resourceChanges).toEqual({ delete: 2 });
      await stack.workspace.removeStack(stack.name);
    }
  }, 240_000);

  it("reports a failing program once, as the official host does", async () => {
    const stack = await localStack("language-host-failing", `throw new Error("boom from the program");\n`);
    try {
      const failure = await stack.preview().then(
        () => undefined,
        (error: Error) => error,
      );
      expect(failure?.message).toContain("boom from the program");
      // The run script exits 32 after logging the error itself; the host then
      // bails instead of adding a generic "non-zero exit code" error.
      expect(failure?.message).not.toContain("non-zero exit code");
    } finally {
      await stack.workspace.removeStack(stack.name);
    }
  }, 240_000);
});
