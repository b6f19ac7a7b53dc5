import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { engineCollectorEnv, workspaceOptions } from "../../provider/src/fleet/shard/shard";

// What a shard's workspace hands the engine besides the backend: Go's
// collector set for an engine that re-encodes its checkpoint every step,
// unless whoever runs the fleet set it.

const folder = mkdtempSync(join(tmpdir(), "dmarc-shard-env-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe("a shard's engine environment", () => {
  it("collects garbage at GOGC 400 unless the runner's environment sets GOGC", () => {
    expect(engineCollectorEnv({})).toEqual({ GOGC: "400" });
    expect(engineCollectorEnv({ GOGC: "150" })).toEqual({});
    expect(engineCollectorEnv({ GOGC: "" })).toEqual({ GOGC: "400" });
  });

  it("gives the workspace the collector's setting, and the fleet's own environment the last word", () => {
    const backend = { projectName: "p", projectDir: folder, stateDir: folder, env: {} };
    const envVars = (env: Record<string, string>) => workspaceOptions({ ...backend, env }, "p-001").envVars ?? {};
    expect(envVars({}).GOGC).toBe(engineCollectorEnv().GOGC);
    expect(envVars({ GOGC: "off" }).GOGC).toBe("off");
  });
});
