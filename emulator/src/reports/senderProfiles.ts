import { ReportType } from "pulumi-dmarc-partner/api";
import type { DomainRecord, SenderSegment, Store } from "../store";
import { type Day, formatDay, parseDay, reportDayOfCreation, reportToday } from "./clock";

// What a domain's aggregate reports say, day by day: a sender profile (volume,
// SPF and DKIM pass rates, the split by report type) turned into whole
// message counts. Every domain has a deterministic default, varied a little by
// its name; the control plane sets another from the current report day on.

/** One report day of one report type. */
export interface DayRow {
  day: Day;
  reportType: ReportType;
  messages: number;
  spfPass: number;
  dkimPass: number;
}

/** Most mail of a healthy sender is DMARC-capable; a little is forwarded or from unknown sources. */
export const DEFAULT_REPORT_TYPE_SHARES: Record<ReportType, number> = {
  "dmarc-capable": 94,
  forwarded: 4,
  "non-compliant": 2,
  "threat-unknown": 0,
};

/** FNV-1a: the same name varies the same way on every run and machine. */
function hashOf(text: string): number {
  let hash = 0x811c9dc5;
  for (const character of text) hash = Math.imul(hash ^ (character.codePointAt(0) ?? 0), 0x01000193) >>> 0;
  return hash;
}

/** About 200 messages a day, SPF about 97% and DKIM about 98% passing, each shifted a little by the name. */
function defaultSegment(domain: string): SenderSegment {
  const hash = hashOf(domain);
  return {
    fromDay: "1970-01-01",
    messagesPerDay: 180 + (hash % 41),
    spfPassRate: 96 + ((hash >>> 8) % 21) / 10,
    dkimPassRate: 97 + ((hash >>> 16) % 21) / 10,
    reportTypeShares: { ...DEFAULT_REPORT_TYPE_SHARES },
  };
}

/** The profile in force on a day: the latest set segment starting on or before it, else the default. */
function segmentOn(store: Store, domain: string, day: Day): SenderSegment {
  const segments = store.senderProfiles.get(domain)?.segments ?? [];
  const set = segments.filter((segment) => parseDay(segment.fromDay) <= day).at(-1);
  return set ?? defaultSegment(domain);
}

/** Whole messages per report type, summing to the day's volume (largest remainders round up). */
function splitByType(messages: number, shares: Record<ReportType, number>): [ReportType, number][] {
  const exact = ReportType.options.map((type) => [type, (messages * shares[type]) / 100] as const);
  const counts = new Map(exact.map(([type, value]) => [type, Math.floor(value)]));
  let left = messages - [...counts.values()].reduce((sum, count) => sum + count, 0);
  const byRemainder = [...exact].sort((a, b) => b[1] - Math.floor(b[1]) - (a[1] - Math.floor(a[1])));
  for (const [type] of byRemainder) {
    if (left <= 0) break;
    counts.set(type, (counts.get(type) ?? 0) + 1);
    left--;
  }
  return ReportType.options.map((type) => [type, counts.get(type) ?? 0]);
}

export function rowsOfDay(store: Store, domain: string, day: Day): DayRow[] {
  const segment = segmentOn(store, domain, day);
  return splitByType(segment.messagesPerDay, segment.reportTypeShares)
    .filter(([, messages]) => messages > 0)
    .map(([reportType, messages]) => ({
      day,
      reportType,
      messages,
      spfPass: Math.round((messages * segment.spfPassRate) / 100),
      dkimPass: Math.round((messages * segment.dkimPassRate) / 100),
    }));
}

/** The days a domain has reports for: from the report day it was added up to yesterday; undefined for none. */
export function reportDays(store: Store, domain: DomainRecord): { first: Day; last: Day } | undefined {
  const first = reportDayOfCreation(store, domain.createdAt);
  const last = reportToday(store) - 1;
  return last < first ? undefined : { first, last };
}

/** Sets the profile from the current report day on; earlier days keep what they had. */
export function setSenderProfile(store: Store, domain: string, profile: Omit<SenderSegment, "fromDay">): SenderSegment {
  const fromDay = formatDay(reportToday(store));
  const kept = (store.senderProfiles.get(domain)?.segments ?? []).filter((segment) => segment.fromDay < fromDay);
  const segment = { fromDay, ...profile };
  store.senderProfiles.set(domain, { domain, segments: [...kept, segment] });
  store.changed();
  return segment;
}
