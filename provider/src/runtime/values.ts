import { z } from "zod";
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
