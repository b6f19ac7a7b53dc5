/**
 * A shard's own rate should its provider lose the runner's pacer
 * (./pacer.ts), which every shard otherwise takes its turns from: the
 * fleet's pace divided among the shards that run at once, so shards that
 * all fall back together still never send above it. The same for every
 * shard of a run, so a rerun writes the same configuration; undefined when
 * the fleet is unpaced.
 */
export function fallbackShare(total: number | undefined, concurrency: number): number | undefined {
  if (total === undefined) return undefined;
  // Rounded down, so the shares never add up to more than the pace.
  return Math.floor((total * 1000) / Math.max(1, concurrency)) / 1000;
}
