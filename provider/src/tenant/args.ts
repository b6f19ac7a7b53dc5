import * as pulumi from "@pulumi/pulumi";
import type { z } from "zod";
import { defaultMessage, keyPathOf, refusalsOf, valueAt } from "../runtime/values";
import { TenantArguments } from "./schema";

// A program's `Tenant` arguments, checked against the tenant's schema when
// the Tenant is constructed, so a JavaScript program's mistake (or a cast's)
// stops the preview in the inventory's words instead of failing the update
// with a TypeError. A value the program gives as an Output or a Promise (an
// id of another resource, a name from configuration) is checked once known.

/**
 * `domain acme.example (domains[0]) policy.stage`: a tenant with thirty
 * domains is not read by counting. The key path alone when the domain has no
 * name to give.
 */
export function pointInTenant(tenant: unknown, path: readonly PropertyKey[]): string {
  const [field, position, ...inner] = path;
  const name = typeof position === "number" && valueAt(tenant, ["domains", position, "name"]);
  if (field !== "domains" || typeof name !== "string" || name === "") return keyPathOf(path);
  const domain = `domain ${name} (domains[${String(position)}])`;
  return inner.length === 0 ? domain : `${domain} ${keyPathOf(inner)}`;
}

/** A value known only later: an Output, or a Promise (a plain `pulumi.Input`). */
const isLater = (value: unknown): value is pulumi.Output<unknown> | PromiseLike<unknown> =>
  pulumi.Output.isInstance(value) || typeof (value as PromiseLike<unknown> | null)?.then === "function";

/** Where the values known only later stand, with the values; descends plain objects and arrays. */
function laterValues(value: unknown, path: PropertyKey[] = []): { path: PropertyKey[]; value: unknown }[] {
  if (isLater(value)) return [{ path, value }];
  if (Array.isArray(value)) return value.flatMap((item, index) => laterValues(item, [...path, index]));
  if (value === null || typeof value !== "object" || Object.getPrototypeOf(value) !== Object.prototype) return [];
  return Object.entries(value).flatMap(([key, inner]) => laterValues(inner, [...path, key]));
}

/** The arguments with each value at `paths` replaced by the one resolved. */
function withResolved(args: unknown, paths: readonly PropertyKey[][], resolved: readonly unknown[]): unknown {
  const replace = (value: unknown, path: PropertyKey[]): unknown => {
    const index = paths.findIndex((at) => at.length === path.length && at.every((step, i) => step === path[i]));
    if (index >= 0) return resolved[index];
    if (Array.isArray(value)) return value.map((item, position) => replace(item, [...path, position]));
    if (value === null || typeof value !== "object" || Object.getPrototypeOf(value) !== Object.prototype) return value;
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, replace(inner, [...path, key])]));
  };
  return replace(args, []);
}

const within = (path: readonly PropertyKey[], outer: readonly PropertyKey[]) =>
  outer.length <= path.length && outer.every((step, index) => step === path[index]);

/** Every problem of the arguments, one line each, but those at or inside a value at `unknown`; values quoted from `shown`. */
function problemsOf(args: unknown, label: string, unknown: readonly PropertyKey[][], shown = args): string[] {
  const parsed = TenantArguments.safeParse(args, { error: defaultMessage });
  if (parsed.success) return [];
  const issues = parsed.error.issues.filter(
    (issue: z.core.$ZodIssue) => !unknown.some((outer) => within(issue.path, outer)),
  );
  return refusalsOf(shown, issues, (path) => `${label}${path.length === 0 ? "" : ` ${pointInTenant(args, path)}`}`);
}

/** What a message quotes of a secret value. */
const SECRET = "[secret]";

/**
 * The Tenant's arguments checked: the problems of the values known now
 * thrown as `refuse` makes them, and, when some are known only later, the
 * problems those bring once resolved (a secret one never quoted) given to
 * `report` then. The engine carries on with a resolved value, whose
 * resource's own check refuses it too: an Output that failed here would
 * leave the resources waiting on it waiting for ever under the Automation API.
 */
export function checkTenantArgs(
  args: unknown,
  label: string,
  refuse: (problems: string[]) => Error,
  report: (problems: string[]) => void,
): void {
  const later = laterValues(args);
  const paths = later.map((entry) => entry.path);
  const problems = problemsOf(args, label, paths);
  if (problems.length > 0) throw refuse(problems);
  if (later.length === 0) return;
  pulumi.all(later.map((entry) => entry.value)).apply(async (resolved) => {
    const secret = await Promise.all(
      later.map(({ value }) => (pulumi.Output.isInstance(value) ? pulumi.isSecret(value) : false)),
    );
    const shown = resolved.map((value, index) => (secret[index] ? SECRET : value));
    const found = problemsOf(withResolved(args, paths, resolved), label, [], withResolved(args, paths, shown));
    if (found.length > 0) report(found);
  });
}
