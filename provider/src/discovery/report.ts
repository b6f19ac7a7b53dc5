import type { LeftOutOrganization } from "./entries";

// What one import found and wrote: the data structure `--json` prints, and
// the summary a terminal shows is read off it.

/** Bumped when a field changes meaning or goes; new fields may come without it. */
export const IMPORT_FORMAT_VERSION = 1;

/** A tenant written to the inventory. */
export interface ImportedTenant {
  key: string;
  name: string;
  organizationId: string;
  domains: number;
  webhooks: number;
  /** Objects its tenant plan declares, each adopted by id: organisation, groups, subscription, domains, webhooks. */
  objects: number;
  /** Why the key is not the one the name gives, when it is not. */
  keyNote?: string;
  /** What of its organisation the entry leaves out, and why (also comments above the entry). */
  leftOut: string[];
}

/** An organisation the inventory, a shard of the fleet or another stack of the backend holds already. */
export interface ManagedOrganization {
  organizationId: string;
  name: string;
  /** `tenant "acme" of the inventory`, `prod-002` (a shard of the fleet), `stack team-b/red-001 (a shard of fleet red)`. */
  by: string;
}

export interface ImportReport {
  formatVersion: typeof IMPORT_FORMAT_VERSION;
  /** The inventory file written to (or that would be). */
  inventory: string;
  mode: "new" | "append";
  /** Organisations found: the account's, or those `--only` named. */
  organizations: number;
  /** Organisations whose objects this run read: those neither the file nor a shard holds. */
  read: number;
  /** Requests this run sent to the service: the token's, the lists', and with `--check` the adoption's. */
  requests: number;
  /** `requests` ÷ `read`, to two decimals (4 lists each, plus the account's few); null when none was read. */
  requestsPerOrganization: number | null;
  /** New tenants, in the order they are written. */
  written: ImportedTenant[];
  /** Organisations with no entry, and why; with `--check` this includes those that would not adopt cleanly. */
  leftOut: LeftOutOrganization[];
  managed: ManagedOrganization[];
  /** What of the account as a whole no entry can hold (webhooks the partner owns). */
  account: string[];
  /** Organisation ids `--only` named that are not the partner's. */
  missing: string[];
  /** Whether each entry's adoption was tried (`--check`). */
  checked: boolean;
  /** Entries left out because their adoption check failed. */
  failedChecks: number;
  /** Whether the file was written; false when there was nothing new to add. */
  changed: boolean;
}

/** How far an import is, told after each batch of organisations. */
export interface ImportProgress {
  /** Organisations this run has read and written or left out, of `total`: those neither the file nor a shard holds. */
  done: number;
  total: number;
  /** Of those done: entries written, organisations left out. */
  written: number;
  leftOut: number;
  /** Organisations the file or a shard holds already, not read again. */
  managed: number;
  /** Requests this run has sent to the service so far. */
  requests: number;
  /** Since the first organisation's reads began (the account's listing before them is not counted). */
  elapsedMs: number;
}

/** The terminal's view of a report. */
export function importSummary(report: ImportReport): string {
  const objects = report.written.reduce((sum, tenant) => sum + tenant.objects, 0);
  const lines = [
    `${report.organizations} organisation(s) read; ${report.written.length} tenant(s) with ${objects} object(s) ${
      report.changed ? "written to" : "to add to"
    } ${report.inventory}${report.changed ? "" : " (nothing new: file unchanged)"}`,
    `${report.leftOut.length} left out, ${report.managed.length} managed already${
      report.checked ? `, adoption checked (${report.failedChecks} would not adopt cleanly)` : ""
    }`,
    `${report.requests} request(s) to the service, ${report.requestsPerOrganization ?? "-"} per organisation read (${report.read} read)`,
    ...report.missing.map((id) => `not found: ${id} is no organisation of this partner`),
    ...report.leftOut.map(
      (organization) => `left out: "${organization.name}" (${organization.organizationId}): ${organization.reason}`,
    ),
    ...report.written.flatMap((tenant) => (tenant.keyNote ? [`${tenant.key}: ${tenant.keyNote}`] : [])),
    ...report.account.map((line) => `account: ${line}`),
  ];
  if (report.written.some((tenant) => tenant.leftOut.length > 0)) {
    lines.push('What each entry leaves out is in the comments above it ("left out: ..."), and in --json.');
  }
  return lines.join("\n");
}
