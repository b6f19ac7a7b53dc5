import type { AuditLogCategory } from "../../api";
import type { DmarcClient } from "../../client";
import { type ShardResult, shardResult } from "../result";
import type { ShardJob } from "../shard/shardJob";
import { organizationIdsOf } from "./scan";

// `drift --audit-log`: a shard is refreshed only when the service's audit log
// shows a change to one of its organisations since the shard was last found
// equal to the service. One request per organisation instead of a refresh's
// reads; what the log does not file (webhooks, an organisation's name, a
// domain's settings) is not seen, so a plain `drift` still runs now and then.

/** The categories under which the log files the objects a tenant declares. */
const AUDITED_CATEGORIES: readonly AuditLogCategory[] = ["DOMAINS", "DOMAIN_GROUPS", "USER_MANAGEMENT", "BILLING"];

/** The service's clock may lag the runner's: changes are looked for from this long before the check, by default. */
export const DEFAULT_AUDIT_LOG_MARGIN_SECONDS = 60;

/** Whether the log shows a change to any of the organisations; a failed read counts as one, for the refresh to tell. */
async function changedSince(client: DmarcClient, organizationIds: readonly string[], since: Date): Promise<boolean> {
  for (const organizationId of organizationIds) {
    const entries = await client
      .countAuditLogEntries(organizationId, AUDITED_CATEGORIES, since)
      .catch(() => Number.POSITIVE_INFINITY);
    if (entries > 0) return true;
  }
  return false;
}

/** Why the log lets a drift job be skipped, or undefined when the shard must be refreshed. */
async function unchangedReason(client: DmarcClient, job: ShardJob, marginSeconds: number): Promise<string | undefined> {
  const { state } = job;
  if (!state?.checkedAt || state.driftMark !== undefined) return undefined;
  const organizationIds = organizationIdsOf(state);
  const since = new Date(Date.parse(state.checkedAt) - marginSeconds * 1000);
  if (await changedSince(client, organizationIds, since)) return undefined;
  return `the audit log shows no change to its ${organizationIds.length} organisations since ${state.checkedAt}`;
}

/** The drift jobs split into those the audit log asks to run and those it lets skip. */
export async function auditedDriftJobs(
  client: DmarcClient,
  jobs: readonly ShardJob[],
  marginSeconds: number,
): Promise<{ jobs: ShardJob[]; skipped: ShardResult[] }> {
  const reasons = await Promise.all(jobs.map((job) => unchangedReason(client, job, marginSeconds)));
  const kept: ShardJob[] = [];
  const skipped: ShardResult[] = [];
  jobs.forEach((job, index) => {
    const reason = reasons[index];
    if (reason === undefined) kept.push(job);
    else {
      const run = { shard: job.shard.name, operation: job.operation, tenants: job.shard.tenants.length };
      skipped.push(shardResult(run, { status: "skipped", reason }));
    }
  });
  return { jobs: kept, skipped };
}
