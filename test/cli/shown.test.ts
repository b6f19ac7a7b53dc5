import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { shellWord, shortened, shownPath } from "../../provider/src/cli/shown";
import { firstErrorLine } from "../../provider/src/fleet/shard/shardJob";

// Messages name files the shortest way and are never cut where their advice is.

const deep = join("/home/runner/work/a repository with a long name", "a repository with a long name", "partners");

describe("shownPath", () => {
  it("names a file from the folder that names it when that is shorter than its absolute path", () => {
    expect(shownPath("publish.js", deep)).toBe("publish.js");
    expect(shownPath("../shared/publish.js", deep)).toBe(join("..", "shared", "publish.js"));
  });

  it("names a file under the working folder from there", () => {
    expect(shownPath(join(process.cwd(), ".dmarc-fleet", "logs", "prod-001.up.log"))).toBe(
      join(".dmarc-fleet", "logs", "prod-001.up.log"),
    );
  });

  it("keeps the absolute path where every relative one is longer", () => {
    expect(shownPath("/srv/fleet", deep)).toBe("/srv/fleet");
  });
});

describe("shortened", () => {
  it("keeps text up to the width whole", () => {
    expect(shortened("x".repeat(80), 80)).toBe("x".repeat(80));
  });

  it("keeps the start and the end of longer text, at the width", () => {
    const text = `start ${"-".repeat(200)} end`;
    const cut = shortened(text, 40);
    expect(cut).toHaveLength(40);
    expect(cut.startsWith("start ")).toBe(true);
    expect(cut.endsWith(" end")).toBe(true);
    expect(cut).toContain("…");
  });
});

describe("shellWord", () => {
  it("quotes a path with a space or a quote so a pasted command keeps it whole", () => {
    expect(shellWord("/srv/fleet")).toBe("/srv/fleet");
    expect(shellWord("/srv/my fleet")).toBe("'/srv/my fleet'");
    expect(shellWord("/srv/partner's")).toBe(`'/srv/partner'\\''s'`);
  });
});

describe("firstErrorLine", () => {
  it("carries the whole line when a deep path fills it, the advice at its end included", () => {
    const module = resolve(deep, "x".repeat(300), "wrong.js");
    const line = `error: tenants.yaml: tenant "Tenant alpha" (tenants[0]) dns.publisher: the module ${module} must export a function publishRecord; it exports publish`;
    expect(firstErrorLine(new Error(`code: 255\n stderr: error: update failed\n  ${line}\n`))).toBe(line);
  });
});
