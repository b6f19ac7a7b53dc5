import { isDeepStrictEqual } from "node:util";
import { containsSecret, UNKNOWN } from "../../provider/src/runtime/values";

type Props = Record<string, unknown>;

/** Whether a preview shows the value: not the engine's unknown, nor a secret (shown as `[secret]` or marked). */
function shownKnown(value: unknown): boolean {
  return value !== UNKNOWN && value !== "[secret]" && !containsSecret(value);
}

/**
 * The recorded value where the preview shows one known, and the preview's
 * own where it shows none, at any depth: equal to the preview exactly when
 * every value it showed known is the one recorded.
 */
export function asPreviewed(recorded: unknown, previewed: unknown): unknown {
  if (!shownKnown(previewed) || containsSecret(recorded)) return previewed;
  if (Array.isArray(previewed) || previewed === null || typeof previewed !== "object") return recorded;
  const fields = (recorded ?? {}) as Props;
  return Object.fromEntries(Object.entries(previewed).map(([key, value]) => [key, asPreviewed(fields[key], value)]));
}

/** What an update was given and what it did, for {@link unknownButKept}. */
export interface UpdateSeen {
  /** The state the update started from. */
  olds: unknown;
  /** What the service held when the update started, where the test knows it. */
  service: unknown;
  /** What the update recorded. */
  updated: unknown;
}

const field = (value: unknown, key: string) => (value as Props | undefined)?.[key];

/**
 * The paths the preview shows unknown although the update provably kept
 * them: the update recorded the value the state held where the service held
 * another, which it can only have taken from the state, so the preview
 * could have shown it.
 */
export function unknownButKept(previewed: unknown, seen: UpdateSeen, path = ""): string[] {
  if (previewed === UNKNOWN) {
    const stale = !isDeepStrictEqual(seen.olds, seen.service);
    return stale && isDeepStrictEqual(seen.updated, seen.olds) ? [path] : [];
  }
  if (previewed === null || typeof previewed !== "object" || Array.isArray(previewed)) return [];
  return Object.entries(previewed).flatMap(([key, value]) =>
    unknownButKept(
      value,
      { olds: field(seen.olds, key), service: field(seen.service, key), updated: field(seen.updated, key) },
      path ? `${path}.${key}` : key,
    ),
  );
}
