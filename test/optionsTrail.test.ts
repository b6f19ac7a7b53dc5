import { describe, expect, it } from "vitest";
import { optionsTrails } from "../scripts/options-trail.mjs";

// CONTRIBUTING.md's "Each function takes what it uses": every command's
// options, followed from the command line through the calls, stay within
// the bounds, and no function below the command layer takes them whole.

describe("each command's options, followed from the command line", () => {
  const followed = optionsTrails();

  it("reach the runner and the edge's resolvers: the trail is followed, not empty", () => {
    const fleet = followed.trails.find((trail) => trail.fn === "fleetCommand");
    expect(fleet?.stays.map((stay) => `${stay.module} ${stay.fn}`)).toEqual(
      expect.arrayContaining(["fleet/runner.ts runFleet", "fleet/fleetOptions.ts settingsOf"]),
    );
    expect(followed.trails.map((trail) => trail.fn).sort()).toEqual(
      ["enforceCommand", "fleetCommand", "importCommand", "reportCommand"].sort(),
    );
  }, 120_000);

  it("stay in at most 30 functions and 15 modules, and climb back up at most 3 times", () => {
    for (const trail of followed.trails) {
      const where = `${trail.command}: ${trail.stays.map((stay) => `${stay.module} ${stay.fn}`).join(", ")}`;
      expect(trail.stays.length, where).toBeLessThanOrEqual(30);
      expect(trail.rooms.length, where).toBeLessThanOrEqual(15);
      expect(trail.climbs.length, where).toBeLessThanOrEqual(3);
    }
  }, 120_000);

  it("are taken whole by no function outside fleet/cli/ and runner.ts", () => {
    expect(followed.wholeOutsideEdge).toEqual([]);
  }, 120_000);
});
