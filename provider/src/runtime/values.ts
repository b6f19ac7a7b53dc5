import { shortened } from "../cli/shown";

// Declared values as messages quote them and as the engine carries them.

/** The value at a path of keys and list positions, or undefined where the path leads nowhere. */
export function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current = root;
  for (const step of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<PropertyKey, unknown>)[step];
  }
  return current;
}

/** A value as a message quotes it: its JSON, its middle cut beyond 80 characters, or `nothing` when there is none. */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  const text = JSON.stringify(value) ?? String(value);
  return shortened(text, 80);
}

/**
 * The value as JSON carries it. Properties go to the engine as a protobuf
 * Struct, which has no `undefined`: keys holding it are dropped.
 */
export function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** Each position whose value stands earlier in the list, with the first position of that value. */
export function repeats(values: readonly unknown[]): { position: number; first: number }[] {
  return values.flatMap((value, position) => {
    const first = values.indexOf(value);
    return first === position ? [] : [{ position, first }];
  });
}
