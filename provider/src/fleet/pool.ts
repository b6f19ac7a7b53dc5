/** What the pool tells a job as it starts it. */
export interface PoolSlot {
  /** Jobs starting together with this one, itself included: the free slots, or fewer when fewer wait. */
  startingWith: number;
}

/**
 * Runs `run` over `items`, at most `limit` at once, and answers every
 * result in the items' order; a job's failure is its own result, so `run`
 * must not throw. The pool alone counts what is running and waiting, and
 * hands each job its {@link PoolSlot} as it starts it.
 */
export async function runPool<T, R>(
  items: readonly T[],
  limit: number,
  run: (item: T, slot: PoolSlot) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  const width = Math.max(1, Math.min(limit, items.length));
  let next = 0;
  let running = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      const waiting = items.length - next;
      const slot = { startingWith: Math.max(1, Math.min(width - running, waiting + 1)) };
      running++;
      try {
        results[index] = await run(items[index] as T, slot);
      } finally {
        running--;
      }
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
  return results;
}
