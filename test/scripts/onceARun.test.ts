import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { onceARun } from "../support/onceARun";

// The suite's results made once a run (test/support/onceARun.ts): the
// language tests' TypeScript Tenant is made by one of them and read by the
// others, so a wrong lock would run it again or hand back half a file.

const unique = (what: string) => `${what}-${process.pid}-${Date.now().toString(36)}`;

describe("a result made once a run", () => {
  it("is made by one caller while the others wait, and all get the same value", async () => {
    const name = unique("made-once");
    let made = 0;
    const make = async () => {
      made += 1;
      await new Promise((resolve) => setTimeout(resolve, 300));
      return { made, shape: ["a", "b"] };
    };
    const results = await Promise.all([onceARun(name, make), onceARun(name, make), onceARun(name, make)]);
    expect(made).toBe(1);
    expect(results).toEqual([1, 1, 1].map(() => ({ made: 1, shape: ["a", "b"] })));
    expect(existsSync(join(inject("runFolder"), `${name}.json`))).toBe(true);
  });

  it("is made again by the next caller when the one making it failed", async () => {
    const name = unique("failed-once");
    await expect(
      onceARun(name, async () => {
        throw new Error("the TypeScript Tenant's up failed");
      }),
    ).rejects.toThrow("the TypeScript Tenant's up failed");
    expect(await onceARun(name, async () => "made by the second")).toBe("made by the second");
  });
});
