import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { createTestStack } from "../support/engine";

// The real engine end to end: the CLI built or found by scripts/engine.mjs,
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
});
