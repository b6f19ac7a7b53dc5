import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { DomainName } from "../api/validation";
import { defaultMessage, keyPathOf, refusalsOf } from "../runtime/values";
import { DomainPolicyArgs, type DomainPolicyEntry } from "./policy";
import { PolicyError } from "./staging";

// Where a program keeps each domain's ramp: the stack's configuration file,
// under the project's `dmarcPolicy` key, a mapping of domain name to its
// `policy`. The program reads it with `stackPolicies()`; `dmarc-fleet enforce
// --stack` reads the same key from the file, without running the program,
// and writes the moves back there, so a pull request shows each one.

/** The key, in the project's namespace (`<project>:dmarcPolicy`), of the domains' ramps. */
export const STACK_POLICY_KEY = "dmarcPolicy";

/** The key's value: each domain's ramp, by its name. */
const StackPolicies = z.record(DomainName, DomainPolicyArgs, {
  error: (issue) => {
    if (issue.code === "invalid_key") return issue.issues[0]?.message;
    if (issue.code === "invalid_type") return "must be a mapping of domain names to their policy ramps";
    return undefined;
  },
});
type StackPolicies = Record<string, DomainPolicyArgs>;

/**
 * Why the value is refused, one line each, every line starting with `where`:
 * `acme:dmarcPolicy: domain acme.example policy.stage: must be one of the steps (...); got "quarantine-50"`.
 */
export function stackPolicyRefusals(value: unknown, where: string): string[] {
  const parsed = StackPolicies.safeParse(value, { error: defaultMessage });
  if (parsed.success) return [];
  return refusalsOf(value, parsed.error.issues, (path) => {
    const [domain, ...inside] = path;
    if (domain === undefined) return `${where}: the domains' ramps`;
    return inside.length === 0
      ? `${where}: domain ${String(domain)}`
      : `${where}: domain ${String(domain)} ${keyPathOf(["policy", ...inside])}`;
  });
}

/** The value as each domain's ramp; a {@link PolicyError} naming every refusal. An absent key is no ramp at all. */
export function parseStackPolicies(value: unknown, where: string): Map<string, DomainPolicyEntry> {
  if (value === undefined) return new Map();
  const problems = stackPolicyRefusals(value, where);
  if (problems.length > 0) throw new PolicyError(problems);
  return new Map(Object.entries(StackPolicies.parse(value)));
}

/**
 * Each domain's DMARC policy ramp from the stack's configuration, the
 * project's `dmarcPolicy` key, for `Tenant`'s `domains[].policy` or
 * `stagedRecord`: `dmarc-fleet enforce --stack <name>` reads the same key and
 * writes each move there. A domain the key does not name has no ramp
 * (`undefined`); a refused value stops the preview naming the domain, the
 * key, the value and what is allowed.
 *
 * @example
 * const policies = stackPolicies();
 * new Tenant("acme", { ..., domains: [{ name: "acme.example", policy: policies["acme.example"] }] });
 */
export function stackPolicies(): Readonly<Partial<StackPolicies>> {
  const config = new pulumi.Config();
  const where = `${config.name}:${STACK_POLICY_KEY}`;
  return Object.fromEntries(parseStackPolicies(config.getObject<unknown>(STACK_POLICY_KEY), where));
}
