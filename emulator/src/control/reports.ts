import type { FastifyInstance } from "fastify";
import { DomainName, ReportType } from "pulumi-dmarc-partner/api";
import { z } from "zod";
import type { Context } from "../context";
import { notFound } from "../errors";
import { advanceClock, formatDay, offsetAt, reportToday } from "../reports/clock";
import { percent, totalsOf } from "../reports/figures";
import { DEFAULT_REPORT_TYPE_SHARES, reportDays, rowsOfDay, setSenderProfile } from "../reports/senderProfiles";
import type { DomainRecord, Store } from "../store";
import { parseInput } from "../wire";

// Levers of the report data: the clock that says which day it is for reports,
// and each domain's sender profile, so a test can shape the evidence a policy
// ramp reads and move days ahead in seconds.

const ClockInput = z.object({ advanceDays: z.number().int().min(1).max(3660) });

const Rate = z.number().min(0).max(100);

const SenderProfileInput = z.object({
  messagesPerDay: z.number().int().min(0).max(10_000_000),
  spfPassRate: Rate,
  dkimPassRate: Rate,
  reportTypeShares: z
    .partialRecord(ReportType, Rate)
    .refine((shares) => Object.values(shares).reduce((sum, share) => sum + share, 0) === 100, {
      message: "must sum to 100",
    })
    .optional(),
});

const DomainParams = z.object({ domain: DomainName });

/** Shares given are complete: a report type left out has none. */
function sharesOf(given: Partial<Record<ReportType, number>> | undefined): Record<ReportType, number> {
  if (given === undefined) return { ...DEFAULT_REPORT_TYPE_SHARES };
  const shares = { ...DEFAULT_REPORT_TYPE_SHARES };
  for (const type of ReportType.options) shares[type] = given[type] ?? 0;
  return shares;
}

function clockView(store: Store) {
  return { today: formatDay(reportToday(store)), offsetDays: offsetAt(store, Date.now()) };
}

/** The domain's oldest record, whatever partner holds it: report data belongs to the DNS name. */
function domainNamed(store: Store, name: string): DomainRecord {
  const record = [...store.domains.values()]
    .filter((candidate) => candidate.domain === name)
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt))[0];
  if (!record) throw notFound("Domain", name);
  return record;
}

/** Every report day the domain has, with its figures. */
function reportDaysView(store: Store, record: DomainRecord) {
  const days = reportDays(store, record);
  const view = [];
  for (let day = days?.first ?? 0; days !== undefined && day <= days.last; day++) {
    const rows = rowsOfDay(store, record.domain, day);
    const totals = totalsOf(rows);
    view.push({
      date: formatDay(day),
      ...totals,
      spfPassRate: percent(totals.spfPass, totals.messages),
      dkimPassRate: percent(totals.dkimPass, totals.messages),
      byReportType: Object.fromEntries(rows.map((row) => [row.reportType, row.messages])),
    });
  }
  return { domain: record.domain, today: formatDay(reportToday(store)), days: view };
}

export function reportDataRoutes(app: FastifyInstance, { store }: Context): void {
  app.get("/_emulator/clock", async () => clockView(store));

  app.post("/_emulator/clock", async (request) => {
    const { advanceDays } = parseInput(ClockInput, request.body, "body");
    advanceClock(store, advanceDays);
    return clockView(store);
  });

  app.get("/_emulator/reports/:domain", async (request) => {
    const { domain } = parseInput(DomainParams, request.params, "params");
    return reportDaysView(store, domainNamed(store, domain));
  });

  app.put("/_emulator/reports/:domain", async (request) => {
    const { domain } = parseInput(DomainParams, request.params, "params");
    const record = domainNamed(store, domain);
    const input = parseInput(SenderProfileInput, request.body, "body");
    const reportTypeShares = sharesOf(input.reportTypeShares);
    return { domain: record.domain, ...setSenderProfile(store, record.domain, { ...input, reportTypeShares }) };
  });
}
