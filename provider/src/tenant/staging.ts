import * as pulumi from "@pulumi/pulumi";
import type { DnsSetupRecord } from "../resources/domain";
import { defaultMessage, keyPathOf, refusalsOf } from "../runtime/values";
import { DomainPolicyArgs, type DomainPolicyEntry, recordWithStage, resolvePolicy } from "./policy";

// A program's record at its ramp's stage: the inventory's model, for a
// `Tenant`'s domains and for a program publishing a `Domain`'s record itself.

/** A refused policy ramp. A `pulumi.RunError`, so a preview stops with these lines and no stack trace. */
export class PolicyError extends pulumi.RunError {
  constructor(readonly problems: readonly string[]) {
    super(problems.join("\n"));
  }
}

/**
 * Why the ramp is refused, one line each, every line starting with `where`:
 * `tenant "acme": domain acme.example (domains[0]) policy.stage: must be one of the steps (...); got "quarantine-50"`.
 */
export function policyRefusals(policy: unknown, where: string): string[] {
  const parsed = DomainPolicyArgs.safeParse(policy, { error: defaultMessage });
  if (parsed.success) return [];
  return refusalsOf(policy, parsed.error.issues, (path) => `${where} ${keyPathOf(["policy", ...path])}`);
}

/** The record with the policy tags of the ramp's stage; a hosted (CNAME) record has no policy tags to set. */
export function recordAtStage(record: DnsSetupRecord, policy: DomainPolicyEntry, where: string): DnsSetupRecord {
  if (record.recordType === "CNAME")
    throw new PolicyError([
      `${where} policy: cannot be set: the service hosts this domain's record (a CNAME), so its policy is set in the service`,
    ]);
  const { stage, sp } = resolvePolicy(policy);
  return { ...record, value: recordWithStage(record.value, stage, sp) };
}

/**
 * A `Domain`'s setup record at the stage of its DMARC policy ramp, for any DNS
 * provider's record resource to publish: `p` and `pct` from `policy.stage`
 * (its first step when not given), `sp` when set, every other tag (`v`,
 * `rua`, `fo`...) as the service gave it, so its verification keeps finding
 * its reporting address. A refused ramp stops the preview naming the domain,
 * the key, the value and what is allowed.
 *
 * @example
 * const record = stagedRecord("acme.example", domain.setupRecord, { target: "reject", stage: "quarantine-25", since: "2026-11-25" });
 * new cloudflare.DnsRecord("acme.example/dmarc", { zoneId, name: record.name, type: record.recordType, content: record.value, ttl: 3600 });
 */
export function stagedRecord(
  domainName: string,
  record: pulumi.Input<DnsSetupRecord>,
  policy: DomainPolicyArgs,
): pulumi.Output<DnsSetupRecord> {
  const where = `domain ${domainName}`;
  const problems = policyRefusals(policy, where);
  if (problems.length > 0) throw new PolicyError(problems);
  return pulumi.output(record).apply((setup) => recordAtStage(setup as DnsSetupRecord, policy, where));
}
