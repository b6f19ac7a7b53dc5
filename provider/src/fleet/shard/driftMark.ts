import type { Stack, TagMap } from "@pulumi/pulumi/automation";

// A shard whose objects were found drifted carries a mark until an `up`
// heals it. The mark is a stack tag: it lives in the backend next to the
// state, so every runner on another machine sees it, and setting it writes
// no state (`drift` must not). A healed mark is overwritten, not removed:
// the file backend keeps a stack's last tag when asked to remove it.

/** The tag's name. */
const DRIFT_MARK = "dmarc-fleet:drift";

const FOUND = "found";

/** What a command writes into the mark: drift found, or none (healed by `up`, or no longer seen by `drift`). */
export function driftMarkValue(outcome: "found" | "none", command: string, at: Date = new Date()): string {
  return `${outcome === "found" ? `${FOUND} by` : "none since"} ${command} at ${at.toISOString()}`;
}

/** The shard's mark when it says drift was found; undefined when it has none or it was healed. */
export function driftFoundIn(tags: TagMap): string | undefined {
  const value = tags[DRIFT_MARK];
  return value?.startsWith(FOUND) ? value : undefined;
}

const CHECKED = /^none since \S+ at (\S+)$/;

/**
 * When the shard's state was last found equal to the service: the start of
 * the operation that wrote a "none" mark. Undefined while drift is marked,
 * or when no operation wrote one.
 */
export function checkedAtIn(tags: TagMap): string | undefined {
  const at = CHECKED.exec(tags[DRIFT_MARK] ?? "")?.[1];
  return at !== undefined && !Number.isNaN(Date.parse(at)) ? at : undefined;
}

export async function writeDriftMark(stack: Stack, value: string): Promise<void> {
  await stack.workspace.setTag(stack.name, DRIFT_MARK, value);
}
