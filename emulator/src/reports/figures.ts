import type { ReportType, VolumePeriod } from "pulumi-dmarc-partner/api";
import type { DomainRecord, Store } from "../store";
import { type Day, formatDay, parseDay } from "./clock";
import { type DayRow, reportDays, rowsOfDay } from "./senderProfiles";

// Sums of a domain's report rows over a range of days: what the pass-rate,
// volume and overview answers are made of.

/** Whole days, both included. */
export interface DayRange {
  first: Day;
  last: Day;
}

export interface Totals {
  messages: number;
  spfPass: number;
  dkimPass: number;
  /**
   * Messages passing DMARC (SPF or DKIM), taken as the larger of the two per
   * day and type: the fewest the two rates allow, as if every DKIM failure
   * were also an SPF failure.
   */
  dmarcPass: number;
}

/** The days of an ISO range: every day the range touches. */
export function dayRangeOf(range: { from: string; to: string }): DayRange {
  return { first: parseDay(range.from), last: parseDay(range.to) };
}

/** The domain's rows on the days of `range` it has reports for, of the report types asked for. */
export function rowsIn(store: Store, domain: DomainRecord, range: DayRange, types: ReadonlySet<ReportType>): DayRow[] {
  const days = reportDays(store, domain);
  if (days === undefined) return [];
  const rows: DayRow[] = [];
  for (let day = Math.max(range.first, days.first); day <= Math.min(range.last, days.last); day++) {
    rows.push(...rowsOfDay(store, domain.domain, day).filter((row) => types.has(row.reportType)));
  }
  return rows;
}

export function totalsOf(rows: readonly DayRow[]): Totals {
  const totals = { messages: 0, spfPass: 0, dkimPass: 0, dmarcPass: 0 };
  for (const row of rows) {
    totals.messages += row.messages;
    totals.spfPass += row.spfPass;
    totals.dkimPass += row.dkimPass;
    totals.dmarcPass += Math.max(row.spfPass, row.dkimPass);
  }
  return totals;
}

/** A share in percent with two decimals, as the description's examples show them; 0 of nothing. */
export function percent(part: number, whole: number): number {
  return whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 100;
}

const WEEKDAY_OF_EPOCH = 3; // 1970-01-01 was a Thursday; weeks start on Monday.

/** The period holding a day: the day itself, its week (Monday to Sunday) or its calendar month. */
export function periodOf(day: Day, period: VolumePeriod): DayRange {
  if (period === "day") return { first: day, last: day };
  if (period === "week") {
    const first = day - ((day + WEEKDAY_OF_EPOCH) % 7);
    return { first, last: first + 6 };
  }
  const month = formatDay(day).slice(0, 7);
  const first = parseDay(`${month}-01`);
  const next = new Date(`${month}-01T00:00:00.000Z`);
  next.setUTCMonth(next.getUTCMonth() + 1);
  return { first, last: parseDay(next.toISOString()) - 1 };
}
