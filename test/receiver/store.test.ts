import { MemoryDeliveryStore } from "pulumi-dmarc-partner/receiver";
import { afterEach, describe, expect, it, vi } from "vitest";

describe("MemoryDeliveryStore", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("moves an id from claimed to processing to done, and forgets a released one", () => {
    const store = new MemoryDeliveryStore();
    expect(store.claim("a")).toBe("claimed");
    expect(store.claim("a")).toBe("processing");
    store.complete("a");
    expect(store.claim("a")).toBe("done");
    expect(store.claim("b")).toBe("claimed");
    store.release("b");
    expect(store.claim("b")).toBe("claimed");
  });

  it("forgets ids after the TTL", () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const store = new MemoryDeliveryStore({ ttlMs: 60_000 });
    store.claim("a");
    store.complete("a");
    vi.advanceTimersByTime(30_000);
    store.claim("b");
    store.complete("b");
    vi.advanceTimersByTime(30_001);
    expect(store.claim("a")).toBe("claimed");
    expect(store.claim("b")).toBe("done");
  });

  it("holds at most maxEntries ids, dropping the oldest", () => {
    const store = new MemoryDeliveryStore({ maxEntries: 100 });
    for (let i = 0; i < 1000; i++) {
      store.claim(`msg_${i}`);
      store.complete(`msg_${i}`);
    }
    expect(store.size).toBe(100);
    expect(store.claim("msg_999")).toBe("done");
    expect(store.claim("msg_0")).toBe("claimed");
  });

  it("defaults to remembering ids for 48 hours", () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const store = new MemoryDeliveryStore();
    store.claim("a");
    store.complete("a");
    vi.advanceTimersByTime(47 * 3_600_000);
    expect(store.claim("a")).toBe("done");
    vi.advanceTimersByTime(3_600_001);
    expect(store.claim("a")).toBe("claimed");
  });

  it("refuses nonsensical bounds", () => {
    expect(() => new MemoryDeliveryStore({ ttlMs: 0 })).toThrow(/ttlMs/);
    expect(() => new MemoryDeliveryStore({ maxEntries: 1.5 })).toThrow(/maxEntries/);
  });
});
