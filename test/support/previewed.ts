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
