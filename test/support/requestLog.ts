import { readFileSync } from "node:fs";

// What the emulator's request log says of a rate: when each request
// arrived, and the most that arrived within any window, as the service's
// sliding window counts them.

/**
 * Arrival times (ms since the epoch) of the API requests logged from `from`
 * on, in order: refused ones included, or with `admitted` only those the
 * service did not answer 429.
 */
export function loggedArrivals(requestLogFile: string, from = 0, { admitted = false } = {}): number[] {
  return readFileSync(requestLogFile, "utf8")
    .trim()
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as { time: string; status: number | null })
    .filter((entry) => !admitted || entry.status !== 429)
    .map((entry) => Date.parse(entry.time))
    .filter((time) => time >= from)
    .sort((a, b) => a - b);
}

/** The most requests that arrived within any `windowMs`: each request and those after it, less than a window later. */
export function busiestWindow(times: readonly number[], windowMs = 60_000): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  let first = 0;
  for (let last = 0; last < sorted.length; last++) {
    while ((sorted[last] ?? 0) - (sorted[first] ?? 0) >= windowMs) first++;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

/** When the first request of `method` and `path` (the route as the log writes it) arrived, from `from` on. */
export function firstArrivalOf(requestLogFile: string, method: string, path: string, from = 0): number {
  const times = readFileSync(requestLogFile, "utf8")
    .trim()
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as { time: string; method: string; path: string })
    .filter((entry) => entry.method === method && entry.path === path)
    .map((entry) => Date.parse(entry.time))
    .filter((time) => time >= from);
  return Math.min(...times);
}
