import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../../scripts/project.mjs";
import { pulumi as cli, pulumiOk } from "../reliability/harness";
import { createTestStack, uniqueStackName, useEngine } from "../support/engine";

// The real engine end to end: the CLI built or found by scripts/engine/,
// the dynamic provider plugin from @pulumi/pulumi, the file backend.
const greetingProvider: pulumi.dynamic.ResourceProvider = {
  async create(inputs) {
    return { id: `greeting-${inputs.name}`, outs: { ...inputs, message: `hello ${inputs.name}` } };
  },
};

class Greeting extends pulumi.dynamic.Resource {
  declare readonly message: pulumi.Output<string>;
  constructor(name: string, args: { name: pulumi.Input<string> }) {
    super(greetingProvider, name, { ...args, message: undefined }, {}, "smoke", "Greeting");
  }
}

describe("Pulumi engine", () => {
  it("runs up, an empty preview and destroy of a dynamic resource", async () => {
    const stack = await createTestStack({
      projectName: "engine-smoke",
      program: async () => {
        const greeting = new Greeting("greeting", { name: "world" });
        return { message: greeting.message };
      },
    });
    try {
      const up = await stack.up();
      expect(up.summary.result).toBe("succeeded");
      expect(up.outputs.message?.value).toBe("hello world");
      expect(up.summary.resourceChanges).toEqual({ create: 2 });

      const preview = await stack.preview();
      expect(preview.changeSummary).toEqual({ same: 2 });
    } finally {
      const destroyed = await stack.destroy();
      expect(destroyed.summary.resourceChanges).toEqual({ delete: 2 });
      await stack.workspace.removeStack(stack.name);
    }
  }, 240_000);

  // scripts/engine/cli.mjs builds the CLI with zxcvbn's word lists read when a value is first judged, not on start.
  it("refuses a plain config value that looks like a secret, and takes one made of dictionary words", async () => {
    const env = await useEngine();
    const folder = join(projectRoot, ".cache", "projects", uniqueStackName("secret-looking"));
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, "Pulumi.yaml"), "name: secret-looking\nruntime: yaml\n");
    const stack = uniqueStackName("stack");
    try {
      await pulumiOk(["stack", "init", stack], folder, env);
      const refused = await cli(["config", "set", "token", "xkqzjvwpfmbhgtyrnldcs", "--stack", stack], folder, env);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain("config value for 'secret-looking:token' looks like a secret");
      // As long a value, but four English words: judged by the word lists, not by its length and alphabet.
      await pulumiOk(["config", "set", "token", "correcthorsebatterystaple", "--stack", stack], folder, env);
    } finally {
      await cli(["stack", "rm", "--yes", "--force", "--stack", stack], folder, env);
      rmSync(folder, { recursive: true, force: true });
    }
  }, 120_000);
});
