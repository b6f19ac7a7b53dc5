import { AdaptiveRate } from "pulumi-dmarc-partner/client";
import { describe, expect, it } from "vitest";

// The pace after the service's refusals, on a clock the test moves: down by
// 30% once per episode of refusals, never below a tenth of the configured
// rate, and back up by a tenth of it a minute while turns are taken.

describe("the adaptive rate", () => {
  it("lowers the rate by 30% once per episode of refusals, and not below a tenth", () => {
    const rate = new AdaptiveRate(60);
    expect(rate.refused(0)).toBe(true);
    expect(rate.perMinute).toBeCloseTo(42);
    // The other refusals of the same episode: the window that was overfilled, still full.
    expect(rate.refused(1_000)).toBe(false);
    expect(rate.perMinute).toBeCloseTo(42);
    for (let burst = 1; burst <= 20; burst++) rate.refused(burst * 60_000);
    expect(rate.perMinute).toBeCloseTo(6);
    // 42, 29.4, 20.6, 14.4, 10.1, 7.1, then the floor.
    expect(rate.decreased).toBe(7);
  });

  it("lowers the rate to its share of the full window it met, as measured by its own turns", () => {
    // Two runs at 57 a minute filled the service's 60 in 32 s: 30 of them this run's.
    const rate = new AdaptiveRate(57);
    for (let turn = 0; turn < 30; turn++) rate.given(turn * (60_000 / 57));
    rate.refused(32_000);
    expect(rate.perMinute).toBeCloseTo(28.5);
    // Alone, the window nearly all its own: a small cut, never less than a tenth.
    const alone = new AdaptiveRate(57);
    for (let turn = 0; turn < 57; turn++) alone.given(turn * (60_000 / 57));
    alone.refused(60_000);
    expect(alone.perMinute).toBeCloseTo(57 * 0.9);
  });

  it("climbs back by a tenth of the ceiling a minute while turns are taken, up to the ceiling", () => {
    const rate = new AdaptiveRate(60);
    rate.refused(0);
    // Turns at the lowered rate, one every 60/42 s, for a minute: about 6 a minute more.
    let now = 0;
    while (now < 60_000) {
      now += 60_000 / rate.perMinute;
      rate.given(now);
    }
    expect(rate.perMinute).toBeGreaterThan(47);
    expect(rate.perMinute).toBeLessThan(49);
    for (let turn = 1; turn <= 1_000; turn++) rate.given(now + turn * 1_000);
    expect(rate.perMinute).toBe(60);
  });

  it("takes an idle stretch as no evidence of room: one interval's climb at most", () => {
    const rate = new AdaptiveRate(60);
    rate.refused(0);
    rate.given(1_000);
    const before = rate.perMinute;
    rate.given(3_600_000);
    // One interval at about 42 a minute (1.4 s) climbs 0.14 a minute; an hour would have climbed to the ceiling.
    expect(rate.perMinute - before).toBeLessThan(0.2);
  });

  it("holds every turn after a refusal, twice as long while refusals follow each other, afresh after a quiet spell", () => {
    const rate = new AdaptiveRate(60);
    rate.refused(0);
    expect(rate.heldUntil).toBe(2_000);
    rate.refused(2_500);
    expect(rate.heldUntil).toBe(6_500);
    rate.refused(7_000);
    expect(rate.heldUntil).toBe(15_000);
    // Quiet for longer than twice the last hold: the next refusal is news of its own.
    rate.refused(100_000);
    expect(rate.heldUntil).toBe(102_000);
    for (let refusal = 1; refusal <= 10; refusal++) rate.refused(100_000 + refusal * 1_000);
    expect(rate.heldUntil).toBe(110_000 + 60_000);
  });

  it("with a service window a tenth of a minute, does the same ten times faster", () => {
    // Two runs at 570 a minute filled a service's 60 in 6 s in 3.2 s: 30 of them this run's, its share 300 a minute.
    const rate = new AdaptiveRate(570, 6_000);
    for (let turn = 0; turn < 30; turn++) rate.given(turn * (60_000 / 570));
    rate.refused(3_200);
    expect(rate.perMinute).toBeCloseTo(285);
    expect(rate.heldUntil).toBe(3_400);
    rate.refused(3_450);
    expect(rate.heldUntil).toBe(3_850);
    // Back up by a tenth of the ceiling a window: 57 a minute more over the next 6 s of turns.
    let now = 3_850;
    while (now < 9_850) {
      now += 60_000 / rate.perMinute;
      rate.given(now);
    }
    expect(rate.perMinute).toBeGreaterThan(285 + 50);
    expect(rate.perMinute).toBeLessThan(285 + 60);
  });

  it("never adapts when unpaced", () => {
    const rate = new AdaptiveRate(0);
    expect(rate.refused(0)).toBe(false);
    expect(rate.perMinute).toBe(0);
  });
});
