import { z } from "zod";
import { shortened } from "../cli/shown";

// Declared values as messages quote them and as the engine carries them.

// The engine's markers in property values, as @pulumi/pulumi's runtime writes
// them: written here once, so the provider's modules load without the SDK; the
// host, the plugin, the checkpoint's reader and the tests take them from here.

/** A value not known during a preview (an output of a resource that does not exist yet). */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
/** The key that marks an object as one of the engine's special values, in a property map and in exported state. */
const SIGNATURE_KEY = "4dabf18193072939515e22adb298388d";
/** The signature of a secret: `{ [SIGNATURE_KEY]: SECRET_SIGNATURE, value }` (`ciphertext` in exported state). */
const SECRET_SIGNATURE = "1b47061264138c4ac30d75fd1eb44270";

/** The value marked as a secret, as the engine takes one. */
export function asSecret(value: unknown): Record<string, unknown> {
  return { [SIGNATURE_KEY]: SECRET_SIGNATURE, value };
}

function isSecret(value: unknown): value is { value: unknown } {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as Record<string, unknown>)[SIGNATURE_KEY] === SECRET_SIGNATURE
  );
}

/** Whether the value, or anything inside it, passes the test. */
function anywhere(value: unknown, test: (value: unknown) => boolean): boolean {
  if (test(value)) return true;
  if (Array.isArray(value)) return value.some((item) => anywhere(item, test));
  if (value !== null && typeof value === "object") return Object.values(value).some((field) => anywhere(field, test));
  return false;
}

/** Whether the value is, or holds, one not known yet. */
export function containsUnknown(value: unknown): boolean {
  return anywhere(value, (part) => part === UNKNOWN);
}

/** Whether the value is, or holds, a secret (still encrypted, in exported state). */
export function containsSecret(value: unknown): boolean {
  return anywhere(value, isSecret);
}

/** The value without secret markers, at any depth. */
export function revealed(value: unknown): unknown {
  if (isSecret(value)) return revealed(value.value);
  if (Array.isArray(value)) return value.map(revealed);
  if (typeof value === "object" && value !== null)
    return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, revealed(field)]));
  return value;
}

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
 * A declaration's refusal as providers word it: `<owner> input "<path>"
 * <problem>; got <value>`, against the property the path starts at; a
 * secret input's value is never quoted.
 */
export function inputFailure(
  owner: string,
  declared: unknown,
  issue: z.core.$ZodIssue,
  secretInputs: ReadonlySet<unknown> = new Set(),
): { property: string; reason: string } {
  const field = issue.path.map(String).join(".") || "(inputs)";
  const given = valueAt(declared, issue.path);
  const shown = secretInputs.has(issue.path[0]) && given !== undefined ? "a secret (not shown)" : describeValue(given);
  return { property: String(issue.path[0] ?? ""), reason: `${owner} input "${field}" ${issue.message}; got ${shown}` };
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

// How a declaration's schema words its refusals, for every schema a partner
// writes by hand (the inventory, a program's policy ramp): a misspelt key
// named with the known ones, zod's own checks in the api schemas' words, and
// the path and given value of each problem.

/** A strict mapping: a misspelt key (`domain:` for `domains:`) is an error, not silently ignored. */
export function mapping<Shape extends z.ZodRawShape>(shape: Shape) {
  const known = Object.keys(shape).join(", ");
  return z.strictObject(shape, {
    error: (issue) => (issue.code === "unrecognized_keys" ? `is not a known key (known: ${known})` : undefined),
  });
}

/** Messages for zod's own checks, in the words of the api schemas' messages. */
export function defaultMessage(issue: z.core.$ZodRawIssue): string | undefined {
  if (issue.input === undefined) return "is required";
  if (issue.code === "invalid_type") {
    const expected: Record<string, string> = {
      object: "a mapping",
      array: "a list",
      string: "a string",
      boolean: "true or false",
    };
    return `must be ${expected[issue.expected] ?? `of type ${issue.expected}`}`;
  }
  if (issue.code === "invalid_value")
    return `must be one of ${issue.values.map((value) => `"${String(value)}"`).join(", ")}`;
  return undefined;
}

/** `domains[0].name` from `["domains", 0, "name"]`. */
export function keyPathOf(path: readonly PropertyKey[]): string {
  return path
    .map((step, position) => (typeof step === "number" ? `[${step}]` : `${position === 0 ? "" : "."}${String(step)}`))
    .join("");
}

/** One refusal a line: where (`point` words a path), what is wrong, and the value given there. */
export function refusalsOf(
  raw: unknown,
  issues: readonly z.core.$ZodIssue[],
  point: (path: readonly PropertyKey[]) => string,
): string[] {
  return issues.flatMap((issue) => {
    const paths = issue.code === "unrecognized_keys" ? issue.keys.map((key) => [...issue.path, key]) : [issue.path];
    return paths.map((path) => {
      const value = valueAt(raw, path);
      const got = value === undefined || issue.code === "unrecognized_keys" ? "" : `; got ${describeValue(value)}`;
      const where = point(path);
      return `${where === "" ? "" : `${where}: `}${issue.message}${got}`;
    });
  });
}
