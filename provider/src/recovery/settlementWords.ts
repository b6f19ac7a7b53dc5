import type { SettlementAction } from "./plan";

/**
 * How each settlement is said: `done` and `planned` start the command's
 * line for a step (`after` ends it), `tally` counts steps in the one-line
 * summary the fleet reports ("adopted 2, dropped 1").
 */
export const SETTLEMENT_WORDS: Record<
  SettlementAction,
  { done: string; planned: string; after?: string; tally: string }
> = {
  adopt: { done: "adopted", planned: "would adopt", tally: "adopted" },
  recreate: {
    done: "recreated",
    planned: "would recreate",
    after: "deleted; the next pulumi up creates it with a new secret",
    tally: "recreated",
  },
  drop: { done: "dropped", planned: "would drop", tally: "dropped" },
  refresh: { done: "refreshed", planned: "would refresh", tally: "refreshed" },
  unsettled: { done: "left", planned: "would leave", after: "settle it by hand", tally: "left unsettled" },
  duplicate: { done: "check", planned: "would ask to check", tally: "found duplicated" },
};
