/**
 * Runs `run` over `items`, at most `limit` at once, and answers every
 * result in the items' order; a job's failure is its own result, so `run`
 * must not throw.
 */
export async function runPool<T, R>(items: readonly T[], limit: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  const width = Math.max(1, Math.min(limit, items.length));
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await run(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
  return results;
}
