import { describeInterruption } from "pulumi-dmarc-partner/recovery";
import { describe, expect, it } from "vitest";

// What scripts and runners show when a command fails because an earlier run
// was killed. The lock and checkpoint failures of the real CLI are checked in
// crash.test.ts; these are the engine's other texts, as it prints them.

describe("describeInterruption", () => {
  it("points at the command when up warns of pending operations", () => {
    const output = [
      "warning: Attempting to deploy or update resources with 2 pending operations from previous deployment.",
      "  * urn:pulumi:dev::fleet::pulumi-nodejs:dynamic:Resource::t0, interrupted while creating",
    ].join("\n");
    expect(describeInterruption(output, { stackName: "dev" })).toContain(
      "`npx dmarc-recover --stack dev`, then `pulumi up`",
    );
  });

  it("reads the cause of an error, and names the project folder when given", () => {
    const error = new Error("update failed", {
      cause: new Error("[409] Conflict: Another update is currently in progress."),
    });
    const hint = describeInterruption(error, { stackName: "prod", workDir: "/srv/fleet" });
    expect(hint).toContain("an update marked as running");
    expect(hint).toContain("npx dmarc-recover --stack prod --cwd /srv/fleet");
  });

  it("says nothing about other failures", () => {
    expect(describeInterruption(new Error("answered 422 ValidationError: name is required"))).toBeUndefined();
    expect(describeInterruption(undefined)).toBeUndefined();
  });
});
