import { type DomainOverview, type ObservedPolicy, type RecordStatus, ReportType } from "pulumi-dmarc-partner/api";
import type { Context } from "../context";
import type { Observation } from "../dns/verifier";
import type { DomainRecord } from "../store";
import { type DayRange, percent, rowsIn, type Totals, totalsOf } from "./figures";

// One domain as the overview shows it: the policy its `_dmarc` record serves
// now (looked up as verification looks it up: the simulated zone or the
// configured resolver) and figures from its report data over the range.

const ALL_TYPES: ReadonlySet<ReportType> = new Set(ReportType.options);

/** A mechanism whose pass rate is at least this is `valid`; below, `warning`. */
const MECHANISM_VALID_RATE = 90;

const ENFORCED = new Set<string>(["none", "quarantine", "reject"]);

/** An unparsable record, or several, is no policy to a receiver (RFC 7489, 6.6.3): `missing`. */
function policyOf(observation: Observation, record: DomainRecord): ObservedPolicy {
  const policy = observation.status === "error" ? record.policy : "policy" in observation ? observation.policy : "";
  return ENFORCED.has(policy) ? (policy as ObservedPolicy) : "missing";
}

/** A lookup that failed falls back to what the service last saw. */
function dmarcStatusOf(observation: Observation, record: DomainRecord): RecordStatus {
  if (observation.status === "success") return "valid";
  if (observation.status === "failed") return "warning";
  if (observation.status === "absent" || record.policy === "missing") return "no-record";
  return record.domainVerified ? "valid" : "warning";
}

function mechanismStatus(passed: number, messages: number): RecordStatus {
  if (messages === 0) return "no-record";
  return percent(passed, messages) >= MECHANISM_VALID_RATE ? "valid" : "warning";
}

/** Compared with the range of the same length just before it. */
function trendOf(now: number, before: number): string {
  if (now > before) return "up";
  return now < before ? "down" : "flat";
}

function complianceOf(totals: Totals, previous: Totals): NonNullable<DomainOverview["dmarc_compliance"]> {
  const compliant = percent(totals.dmarcPass, totals.messages);
  const before = percent(previous.dmarcPass, previous.messages);
  return {
    compliant: { trend: trendOf(compliant, before), value: totals.dmarcPass, percentage: compliant },
    none_compliant: {
      trend: trendOf(before, compliant),
      value: totals.messages - totals.dmarcPass,
      percentage: totals.messages === 0 ? 0 : Math.round((100 - compliant) * 100) / 100,
    },
    overall_compliance: compliant,
  };
}

export async function overviewOf(
  { store, verifier }: Context,
  record: DomainRecord,
  range: DayRange,
): Promise<DomainOverview> {
  const observation = await verifier.observe(record);
  const totals = totalsOf(rowsIn(store, record, range, ALL_TYPES));
  const length = range.last - range.first + 1;
  const previous = totalsOf(rowsIn(store, record, { first: range.first - length, last: range.first - 1 }, ALL_TYPES));
  const group = store.domainGroups.get(record.groupId)?.name;
  return {
    domain: record.domain,
    type: record.type,
    policy: policyOf(observation, record),
    spf: mechanismStatus(totals.spfPass, totals.messages),
    dkim: mechanismStatus(totals.dkimPass, totals.messages),
    dmarc: dmarcStatusOf(observation, record),
    bimi: "no-record",
    volume: totals.messages,
    spf_pass_rate: percent(totals.spfPass, totals.messages),
    dkim_pass_rate: percent(totals.dkimPass, totals.messages),
    dmarc_compliance: complianceOf(totals, previous),
    ...(group === undefined ? {} : { domain_group: group }),
    domain_verified: record.domainVerified,
  };
}
