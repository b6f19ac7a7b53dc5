import { assignShards } from "pulumi-dmarc-partner/fleet";
import { describe, expect, it } from "vitest";
import { fallbackShare } from "../../provider/src/fleet/budget";

// Where tenants go: placed ones never move, new ones fill the lowest shard holding tenants with room.

const deployed = (entries: [number, string[]][]) => new Map(entries);
const layout = (shards: ReturnType<typeof assignShards>) =>
  shards.map(
    (shard) =>
      `${shard.name}: ${shard.tenants.join(" ")}${shard.leaving.length ? ` | leaving ${shard.leaving.join(" ")}` : ""}`,
  );

describe("assignShards", () => {
  it("fills shards in file order on a fresh backend", () => {
    expect(layout(assignShards("prod", deployed([]), ["a", "b", "c"], 2))).toEqual(["prod-001: a b", "prod-002: c"]);
  });

  it("keeps every placed tenant where it is, wherever the file lists it", () => {
    const shards = assignShards(
      "prod",
      deployed([
        [1, ["a", "b"]],
        [2, ["c"]],
      ]),
      ["c", "new", "b", "a"],
      2,
    );
    expect(layout(shards)).toEqual(["prod-001: b a", "prod-002: c new"]);
  });

  it("fills a slot a removed tenant frees, and marks the removed one as leaving", () => {
    const shards = assignShards(
      "prod",
      deployed([
        [1, ["a", "b"]],
        [2, ["c", "d"]],
      ]),
      ["a", "c", "d", "e"],
      2,
    );
    expect(layout(shards)).toEqual(["prod-001: a e | leaving b", "prod-002: c d"]);
  });

  it("opens a shard after the highest one when all are full", () => {
    const shards = assignShards(
      "prod",
      deployed([
        [1, ["a"]],
        [3, ["c"]],
      ]),
      ["a", "c", "x", "y"],
      1,
    );
    expect(layout(shards)).toEqual(["prod-001: a", "prod-003: c", "prod-004: x", "prod-005: y"]);
  });

  it("places as if a shard stack holding no tenant were not there, as a runner that has not seen it yet does", () => {
    // Three runners start together on a new fleet; the one for shard 3 scans once shard 2's runner has made its
    // stack, before shard 1's has: it places every tenant where the other two do.
    const seenByThird = assignShards("prod", deployed([[2, []]]), ["a", "b", "c", "d", "e", "f"], 2);
    const seenByFirst = assignShards("prod", deployed([]), ["a", "b", "c", "d", "e", "f"], 2);
    expect(layout(seenByThird)).toEqual(["prod-001: a b", "prod-002: c d", "prod-003: e f"]);
    expect(layout(seenByThird)).toEqual(layout(seenByFirst));
    expect(seenByThird.map((shard) => shard.exists)).toEqual([false, true, false]);
    expect(
      layout(
        assignShards(
          "prod",
          deployed([
            [1, ["a"]],
            [3, []],
          ]),
          ["a", "x", "y"],
          1,
        ),
      ),
    ).toEqual(["prod-001: a", "prod-002: x", "prod-003: y"]);
  });

  it("keeps a shard all of whose tenants left, to offboard them", () => {
    const shards = assignShards(
      "prod",
      deployed([
        [1, ["a"]],
        [2, ["b"]],
      ]),
      ["b"],
      1,
    );
    expect(layout(shards)).toEqual(["prod-001:  | leaving a", "prod-002: b"]);
  });

  it("refuses a shard size below one", () => {
    expect(() => assignShards("prod", deployed([]), [], 0)).toThrow(
      "shard size must be a whole number of at least 1, got 0",
    );
  });
});

describe("fallbackShare", () => {
  it("divides the pace among the shards that run at once, rounded down, so shards that all lose the pacer stay within it", () => {
    expect(fallbackShare(54, 2)).toBe(27);
    expect(fallbackShare(57, 2)).toBe(28.5);
    expect(fallbackShare(20, 3)).toBe(6.666);
    expect(3 * (fallbackShare(20, 3) ?? 0)).toBeLessThanOrEqual(20);
  });

  it("sets no rate when there is no limit", () => {
    expect(fallbackShare(undefined, 3)).toBeUndefined();
  });
});
