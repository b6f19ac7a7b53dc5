import type { DmarcClient } from "pulumi-dmarc-partner/client";
import type { Operation } from "./fleet";

/** Runs at most `limit` tasks at once, first come first served. */
export function limiter(limit: number): <T>(task: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: Array<() => void> = [];
  return async (task) => {
    if (active < limit) active += 1;
    // A finishing task hands its slot straight to the next waiter.
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else active -= 1;
    }
  };
}

/**
 * Runs the graph as the engine would: an operation starts once the ones it
 * waits for are done, and at most `parallel` are in flight (Pulumi's
 * --parallel). The client's own pacing and concurrency apply underneath.
 */
export async function runOperations(ops: readonly Operation[], client: DmarcClient, parallel: number): Promise<void> {
  const byKey = new Map(ops.map((op) => [op.key, op]));
  const started = new Map<string, Promise<void>>();
  const limit = limiter(parallel);
  const start = (key: string): Promise<void> => {
    const known = started.get(key);
    if (known) return known;
    const op = byKey.get(key);
    if (!op) return Promise.reject(new Error(`operation ${key} waits for an unknown operation`));
    // Registered before its dependencies are looked at, so each operation runs once.
    const done = Promise.resolve()
      .then(() => Promise.all(op.after.map(start)))
      .then(() => limit(() => op.run(client)));
    started.set(key, done);
    return done;
  };
  await Promise.all(ops.map((op) => start(op.key)));
}
