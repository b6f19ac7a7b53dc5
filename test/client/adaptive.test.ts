import { AdaptiveRate } from "pulumi-dmarc-partner/client";
import { describe, expect, it } from "vitest";

// The pace after the service's refusals, on a clock the test moves: down by
// 30% once per burst of refusals, never below a tenth of the configured
// rate, and back up by a tenth of it a minute while turns are taken.

describe("the adaptive rate", () => {
  it("lowers the rate by 30% once per burst of refusals, and not below a tenth", () => {
    const rate = new AdaptiveRate(60);
    expect(rate.refused(0)).toBe(true);
    expect(rate.perMinute).toBeCloseTo(42);
    // The other refusals of the same burst: requests sent before the rate was lowered.
    expect(rate.refused(1_000)).toBe(false);
    expect(rate.perMinute).toBeCloseTo(42);
    for (let burst = 1; burst <= 20; burst++) rate.refused(burst * 60_000);
    expect(rate.perMinute).toBeCloseTo(6);
    // 42, 29.4, 20.6, 14.4, 10.1, 7.1, then the floor.
    expect(rate.decreased).toBe(7);
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
    expect(rate.perMinute - before).toBeLessThan(0.2);
  });

  it("never adapts when unpaced", () => {
    const rate = new AdaptiveRate(0);
    expect(rate.refused(0)).toBe(false);
    expect(rate.perMinute).toBe(0);
  });
});
