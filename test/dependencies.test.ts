import { describe, expect, it } from "vitest";
import { contributingGraph, cruiseProject } from "../scripts/dependencies.mjs";

// provider/src, emulator/src, scripts/, test/support and bench/src against the rules of
// .dependency-cruiser.cjs: CONTRIBUTING's layers, no import circles, no module nothing imports, programs
// started through the one runner.

describe("the module rules", () => {
  const cruised = cruiseProject();

  it("hold: every import goes down a layer, no circle, no orphan", async () => {
    expect((await cruised).violations).toEqual([]);
  }, 240_000);

  it("draw CONTRIBUTING.md's module graph as it is (npm run graph redraws it)", async () => {
    expect(contributingGraph()).toBe((await cruised).graph);
  }, 240_000);
});
