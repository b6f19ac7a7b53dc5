import type { Stack, TagMap } from "@pulumi/pulumi/automation";

// What a shard's last `up` came to, as a stack tag beside the drift mark:
// `done <digest> at <time>` once an `up` returned successfully, that is once
// every object of every tenant (records and verifications included, and any
// kind of object added later) succeeded; `failed at <time>` when one failed,
// and from the start of an `up` of a shard marked done, so that a runner
// killed in the middle leaves the shard due. The runner writes it, not the
// program, so no kind of object can be forgotten. Like the drift mark it
// lives in the backend, writes no state, and is overwritten, never removed.
// The time is when that `up` started.

/** The tag's name. */
export const UP_MARK = "dmarc-fleet:up";

/** A shard's last `up`, as its tag says. */
export interface LastUp {
  outcome: "done" | "failed";
  /** When that `up` started (ISO 8601). */
  at: string;
}

/** The tag's value after a successful `up` that deployed `digest`. */
export function upDoneValue(digest: string, at: Date): string {
  return `done ${digest} at ${at.toISOString()}`;
}

/** The tag's value for an `up` that failed, was interrupted, or is under way. */
export function upFailedValue(at: Date): string {
  return `failed at ${at.toISOString()}`;
}

const DONE = /^done (\S+) at (\S+)$/;
const FAILED = /^failed at (\S+)$/;

const isTime = (at: string) => !Number.isNaN(Date.parse(at));

/** The shard's last `up` and, when it was done, the digest it deployed; nothing for a missing or unreadable tag. */
export function lastUpIn(tags: TagMap): { lastUp?: LastUp; digest?: string } {
  const value = tags[UP_MARK] ?? "";
  const done = DONE.exec(value);
  if (done?.[1] && done[2] && isTime(done[2])) return { lastUp: { outcome: "done", at: done[2] }, digest: done[1] };
  const failed = FAILED.exec(value);
  if (failed?.[1] && isTime(failed[1])) return { lastUp: { outcome: "failed", at: failed[1] } };
  return {};
}

export async function writeUpMark(stack: Stack, value: string): Promise<void> {
  await stack.workspace.setTag(stack.name, UP_MARK, value);
}
