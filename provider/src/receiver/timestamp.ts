/** Whole seconds since the epoch, or undefined for anything else (signs, decimals, exponents, junk). */
export function parseTimestamp(header: string): number | undefined {
  if (!/^[0-9]{1,15}$/.test(header)) return undefined;
  return Number(header);
}

export type Freshness = "fresh" | "too_old" | "too_new";

/** Where a signed timestamp falls against `now`, with the same tolerance on both sides for clock skew. */
export function freshness(timestampSeconds: number, toleranceSeconds: number, nowMs: number): Freshness {
  const nowSeconds = Math.floor(nowMs / 1000);
  if (nowSeconds - timestampSeconds > toleranceSeconds) return "too_old";
  if (timestampSeconds - nowSeconds > toleranceSeconds) return "too_new";
  return "fresh";
}
