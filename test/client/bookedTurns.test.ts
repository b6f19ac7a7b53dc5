import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AdaptiveRate, BookedTurns, budgetStoreFor } from "pulumi-dmarc-partner/client";
import { describe, expect, it } from "vitest";

// Turns booked in a partner's budget store are spaced where they are given,
// not only where they were booked: a busy machine that gives one turn late
// must not give the next right after it.

const RATE = 600;
const INTERVAL_MS = 60_000 / RATE;
/**
 * The test sees a turn a few promise callbacks after the pacer gives it, and the two sightings may lag
 * differently by a fraction of a millisecond (99.53 ms seen once for turns the pacer gave 100 ms apart).
 * What it guards against is a turn given at its booked moment right after a late one: 53.9 ms apart.
 */
const SIGHTING_JITTER_MS = 2;

/** Holds the event loop for `ms`, as a busy machine does: timers due meanwhile fire late. */
function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe("turns booked in a budget store", () => {
  it("give the turn after a late one an interval after it, not at its booked moment", async () => {
    const folder = mkdtempSync(join(tmpdir(), "dmarc-booked-"));
    const store = budgetStoreFor({ setting: `machine:${folder}`, partner: "booked-turns-test" });
    if (!store) throw new Error("no budget store");
    const turns = new BookedTurns(store, new AdaptiveRate(RATE), { lost: () => {}, rejoined: () => {} });
    await turns.take();
    const given = [turns.take(), turns.take()].map((turn) => turn.then(() => performance.now()));
    // The second turn is booked an interval after the first; the loop then stalls past that moment.
    await new Promise(setImmediate);
    stall(INTERVAL_MS * 1.5);
    const [second = 0, third = 0] = await Promise.all(given);
    await store.close();
    rmSync(folder, { recursive: true, force: true });
    expect(third - second).toBeGreaterThanOrEqual(INTERVAL_MS - SIGHTING_JITTER_MS);
  });
});
