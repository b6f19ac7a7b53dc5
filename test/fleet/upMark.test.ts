import { describe, expect, it } from "vitest";
import { assignShards } from "../../provider/src/fleet/plan/assignment";
import { overviewOf } from "../../provider/src/fleet/plan/shardOverview";
import { type ShardState, shardDigest } from "../../provider/src/fleet/shard/shard";
import { lastUpIn, UP_MARK, upDoneValue, upFailedValue } from "../../provider/src/fleet/shard/upMark";
import { inventoryOf, tenant } from "./support";

// A shard's `up` mark, the `dmarc-fleet:up` tag the runner writes once an
// `up` returned (or failed), and what `status` says of a shard from it.

const at = new Date("2026-11-25T09:12:03.417Z");
const inventory = inventoryOf([tenant("alpha"), tenant("bravo")]);
const digest = shardDigest(inventory, ["alpha", "bravo"]);

/** Shard 001 of fleet `prod` as the scan found it: alpha and bravo deployed, plus what `found` says. */
function due(found: Partial<ShardState> | undefined): string | undefined {
  const state: ShardState | undefined = found && {
    name: "prod-001",
    tenants: ["alpha", "bravo"],
    holdings: {},
    ...found,
  };
  const deployed = new Map(state ? [[1, state.tenants]] : []);
  const [shard] = assignShards("prod", deployed, ["alpha", "bravo"], 50);
  if (!shard) throw new Error("no shard");
  const overview = overviewOf(inventory, shard, state);
  expect(overview.upToDate).toBe(overview.due === undefined);
  return overview.due;
}

describe("the up mark", () => {
  it("reads back what the runner writes, and nothing from a missing or foreign value", () => {
    expect(lastUpIn({ [UP_MARK]: upDoneValue("0123456789abcdef", at) })).toEqual({
      lastUp: { outcome: "done", at: "2026-11-25T09:12:03.417Z" },
      digest: "0123456789abcdef",
    });
    expect(lastUpIn({ [UP_MARK]: upFailedValue(at) })).toEqual({
      lastUp: { outcome: "failed", at: "2026-11-25T09:12:03.417Z" },
    });
    expect(lastUpIn({})).toEqual({});
    expect(lastUpIn({ [UP_MARK]: "done at yesterday" })).toEqual({});
  });

  it("makes a shard up to date only after a successful up of the same digest, and says why one is due", () => {
    expect(due({ ...lastUpIn({ [UP_MARK]: upDoneValue(digest, at) }) })).toBeUndefined();
    expect(due(undefined)).toBe("never deployed");
    expect(due({ tenants: [] })).toBe("never deployed");
    expect(due({ ...lastUpIn({ [UP_MARK]: upFailedValue(at) }) })).toBe(
      "its last up failed at 2026-11-25T09:12:03.417Z",
    );
    expect(due({ ...lastUpIn({ [UP_MARK]: upDoneValue("0123456789abcdef", at) }) })).toBe("the inventory changed");
    // Deployed by a version before the mark: it runs once.
    expect(due({})).toBe("no successful up recorded");
    expect(
      due({
        ...lastUpIn({ [UP_MARK]: upFailedValue(at) }),
        interruption: { kind: "pendingOperations", operations: [{ type: "dmarc:Domain", urn: "urn" }] },
        driftMark: "found by drift at 2026-11-25T10:00:00.000Z",
      }),
    ).toBe(
      "interrupted (1 pending operation(s)); its last up failed at 2026-11-25T09:12:03.417Z; drift found by drift at 2026-11-25T10:00:00.000Z",
    );
  });
});
