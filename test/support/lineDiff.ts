// What a reviewer reads in a pull request's diff of a file: the lines taken
// out and the lines put in, by the longest run of lines both texts share.

export interface LineDiff {
  removed: string[];
  added: string[];
}

/** The lines of `before` missing from `after` and those `after` adds, each in order. */
export function lineDiff(before: string, after: string): LineDiff {
  const [old, now] = [before.split("\n"), after.split("\n")];
  // common[i][j]: the longest shared subsequence of old[i..] and now[j..].
  const common = Array.from({ length: old.length + 1 }, () => new Array<number>(now.length + 1).fill(0));
  for (let i = old.length - 1; i >= 0; i--)
    for (let j = now.length - 1; j >= 0; j--)
      (common[i] as number[])[j] =
        old[i] === now[j]
          ? (common[i + 1]?.[j + 1] ?? 0) + 1
          : Math.max(common[i + 1]?.[j] ?? 0, common[i]?.[j + 1] ?? 0);
  const diff: LineDiff = { removed: [], added: [] };
  let [i, j] = [0, 0];
  while (i < old.length || j < now.length) {
    if (i < old.length && j < now.length && old[i] === now[j]) [i, j] = [i + 1, j + 1];
    else if (j < now.length && (i >= old.length || (common[i]?.[j + 1] ?? 0) >= (common[i + 1]?.[j] ?? 0)))
      diff.added.push(now[j++] as string);
    else diff.removed.push(old[i++] as string);
  }
  return diff;
}
