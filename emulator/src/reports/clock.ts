import type { Store } from "../store";

// The report clock: the emulator's idea of today for aggregate reports, which
// a test moves days ahead (POST /_emulator/clock) to run a policy ramp in
// seconds. It moves report days only: tokens, subscriptions, webhook retries,
// verification windows and every timestamp keep the machine's clock.

const DAY_MS = 86_400_000;

/** A UTC day as a count of days since 1970-01-01. */
export type Day = number;

function dayOf(ms: number): Day {
  return Math.floor(ms / DAY_MS);
}

/** `YYYY-MM-DD` */
export function formatDay(day: Day): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

export function parseDay(text: string): Day {
  return dayOf(Date.parse(text));
}

/** The first instant of a day, as the report routes spell dates. */
export function startOf(day: Day): string {
  return new Date(day * DAY_MS).toISOString();
}

/** The last millisecond of a day. */
export function endOf(day: Day): string {
  return new Date((day + 1) * DAY_MS - 1).toISOString();
}

/** Days the clock had been moved ahead at the instant `ms`. */
export function offsetAt(store: Store, ms: number): number {
  return store.clockAdvances.filter((advance) => Date.parse(advance.at) <= ms).reduce((sum, { days }) => sum + days, 0);
}

/** The report day of an instant: its machine UTC day plus the moves made before it. */
function reportDayAt(store: Store, ms: number): Day {
  return dayOf(ms) + offsetAt(store, ms);
}

/**
 * The report day an object was created on: the moves of the clock made
 * before its millisecond. One made in the same millisecond came after it (a
 * test creates a domain and moves the clock at once: the domain had that day).
 */
export function reportDayOfCreation(store: Store, createdAt: string): Day {
  const ms = Date.parse(createdAt);
  return dayOf(ms) + offsetAt(store, ms - 1);
}

export function reportToday(store: Store): Day {
  return reportDayAt(store, Date.now());
}

export function advanceClock(store: Store, days: number): void {
  store.clockAdvances.push({ at: new Date().toISOString(), days });
  store.changed();
}
