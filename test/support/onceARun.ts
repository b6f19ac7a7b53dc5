import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { inject } from "vitest";

// A result several test files share (a build, a shape they compare against), made by whichever file asks
// first and read by the others from the run's folder (test/support/runFolder.ts).
// One file makes it at a time; if that file fails, the next one to ask tries.

/** How long a file waits for another to finish making the result. */
const WAIT_MS = 240_000;
const POLL_MS = 250;

/** `make()`'s result, made once in this vitest run; it must survive JSON. */
export async function onceARun<T>(name: string, make: () => Promise<T>): Promise<T> {
  const folder = inject("runFolder");
  const result = join(folder, `${name}.json`);
  const making = join(folder, `${name}.making`);
  const started = Date.now();
  for (;;) {
    if (existsSync(result)) return JSON.parse(readFileSync(result, "utf8")) as T;
    try {
      mkdirSync(making);
    } catch {
      if (Date.now() - started > WAIT_MS)
        throw new Error(`waited ${WAIT_MS / 1000} s for another test file to make "${name}" in ${folder}`);
      await sleep(POLL_MS);
      continue;
    }
    try {
      const value = await make();
      // Written aside, then renamed into place: a file that finds the result finds it whole.
      writeFileSync(`${result}.${process.pid}`, JSON.stringify(value));
      renameSync(`${result}.${process.pid}`, result);
      return value;
    } finally {
      rmSync(making, { recursive: true, force: true });
    }
  }
}
