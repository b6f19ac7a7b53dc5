import { type DmarcClient, requestsSent } from "../client";
import type { Inventory } from "../inventory/inventory";
import { clientFrom, type ProviderSettings } from "../runtime/config";
import type { DynamicProviderHost } from "../runtime/host";
import type { TenantOnDelete } from "../tenant/tenant";
import { type DiscoveredAccount, discoverAccount, discoverOrganization } from "./account";
import { adoptionHost } from "./adoption";
import type { LeftOutOrganization } from "./entries";
import { ImportFile } from "./importFile";
import { type Candidate, judgeBatch, objectsOf } from "./judging";
import { IMPORT_FORMAT_VERSION, type ImportProgress, type ImportReport, type ManagedOrganization } from "./report";
import { domainOwners, type ImportScope, inKeyOrder, type KeyedOrganization, splitManaged } from "./selection";

// `dmarc-fleet import`'s run: the account read, its organisations judged
// and written a batch at a time (judging.ts, importFile.ts), and the report.

/** What removing an imported tenant from the file does unless told otherwise: nothing on the service. */
export const DEFAULT_IMPORT_ON_DELETE: TenantOnDelete = "keep";

export interface ImportOptions extends ImportScope {
  /** The provider settings (`dmarc:*`): the service, the credentials, `requestsPerSecond`, `partnerId`. */
  settings: ProviderSettings;
  /** The file's name, for the report and messages. */
  inventoryName: string;
  /** The inventory to add to and its text; absent to write a new file. */
  existing?: { text: string; inventory: Inventory };
  /** Only these organisations. */
  only?: readonly string[];
  /** Each entry's `onDelete`; default {@link DEFAULT_IMPORT_ON_DELETE}. */
  onDelete?: TenantOnDelete;
  /** Try each entry's adoption (reads only) and leave out those that would not adopt cleanly. */
  check?: boolean;
  /** Writes the file's whole new text, at once: called as batches add to it (see importFile.ts). */
  write: (text: string) => void;
  /** Told how far the import is after each batch. */
  progress?: (progress: ImportProgress) => void;
}

/**
 * Organisations read and checked at a time, and written at a time at the
 * service's pace (57 requests a minute, four an organisation: a batch is
 * about 45 s of work, the most an interrupted import reads again).
 */
const IMPORT_BATCH = 10;

/** An import that stopped part of the way; the file holds the entries written before, and reads back whole. */
export class ImportIncomplete extends Error {
  override name = "ImportIncomplete";
  constructor(
    readonly progress: ImportProgress,
    readonly inventoryName: string,
    override readonly cause: unknown,
  ) {
    super(
      `the import stopped after ${progress.done} of ${progress.total} organisation(s), ${progress.written} of them written to ${inventoryName}: ${cause instanceof Error ? cause.message : String(cause)}`,
    );
  }
}

function accountNotes(account: DiscoveredAccount): string[] {
  if (account.partnerWebhooks === undefined) {
    return ["webhooks the partner owns were not looked for, because dmarc:partnerId is not set"];
  }
  return account.partnerWebhooks.map(
    (webhook) =>
      `left out: webhook "${webhook.name}" (${webhook.objectId}) that the partner owns, because the inventory declares each organisation's own webhooks`,
  );
}

/** One import as it goes: what it read of the account, and what it has written and left out so far. */
interface ImportRun {
  options: ImportOptions;
  client: DmarcClient;
  host: DynamicProviderHost;
  account: DiscoveredAccount;
  managed: ManagedOrganization[];
  /** The organisations this run reads, in the order it writes them. */
  queue: KeyedOrganization[];
  file: ImportFile;
  owners: Map<string, string>;
  candidates: Candidate[];
  leftOut: LeftOutOrganization[];
  failedChecks: number;
  done: number;
  requestsBefore: number;
  startedAt: number;
}

function progressOf(run: ImportRun): ImportProgress {
  return {
    done: run.done,
    total: run.queue.length,
    written: run.candidates.length - run.file.heldBack,
    leftOut: run.leftOut.length,
    managed: run.managed.length,
    requests: requestsSent() - run.requestsBefore,
    elapsedMs: performance.now() - run.startedAt,
  };
}

/** The organisations' entries: read, judged, then written after those before them. */
async function importBatch(run: ImportRun, batch: readonly KeyedOrganization[], last: boolean): Promise<void> {
  const { options, client, host, account } = run;
  const discovered = await Promise.all(
    batch.map(async (keyed) => ({ keyed, objects: await discoverOrganization(client, keyed.organization) })),
  );
  const judged = await judgeBatch(discovered, {
    host,
    plans: account.plans,
    owners: run.owners,
    onDelete: options.onDelete ?? DEFAULT_IMPORT_ON_DELETE,
    check: options.check === true,
  });
  run.candidates.push(...judged.candidates);
  run.file.add(judged.candidates, last);
  run.leftOut.push(...judged.leftOut);
  run.failedChecks += judged.failedChecks;
  run.done += batch.length;
  options.progress?.(progressOf(run));
}

/** The lines that say what was left out and why: after a new file's tenants, or after the last one added. */
function finish(run: ImportRun): void {
  run.leftOut.sort((a, b) => a.name.localeCompare(b.name) || a.organizationId.localeCompare(b.organizationId));
  const trailing = [
    ...run.leftOut.map(
      (organization) =>
        `left out: organisation "${organization.name}" (${organization.organizationId}): ${organization.reason}`,
    ),
    ...accountNotes(run.account),
  ];
  run.file.close(trailing, run.options.existing !== undefined);
}

function importReport(run: ImportRun): ImportReport {
  const requests = requestsSent() - run.requestsBefore;
  const read = run.done;
  return {
    formatVersion: IMPORT_FORMAT_VERSION,
    inventory: run.options.inventoryName,
    mode: run.options.existing ? "append" : "new",
    organizations: run.account.organizations.length,
    read,
    requests,
    requestsPerOrganization: read === 0 ? null : Math.round((requests / read) * 100) / 100,
    written: run.candidates.map(({ proposal, parsed }) => ({
      key: proposal.entry.key,
      name: proposal.entry.name,
      organizationId: proposal.organizationId,
      domains: proposal.entry.domains?.length ?? 0,
      webhooks: proposal.entry.webhooks?.length ?? 0,
      objects: objectsOf(parsed),
      ...(proposal.keyNote ? { keyNote: proposal.keyNote } : {}),
      leftOut: proposal.leftOut,
    })),
    leftOut: run.leftOut,
    managed: run.managed,
    account: accountNotes(run.account),
    missing: run.account.missing,
    checked: run.options.check === true,
    failedChecks: run.failedChecks,
    changed: run.file.writes > 0,
  };
}

/** The run before its first organisation: the account read, the organisations it will read in order. */
async function startRun(options: ImportOptions): Promise<ImportRun> {
  const requestsBefore = requestsSent();
  const client = clientFrom(options.settings);
  // The adoption check reads through this same cached client: both see this run's lists, and only these.
  client.forgetLists();
  const account = await discoverAccount(client, {
    ...(options.only ? { only: options.only } : {}),
    ...(options.settings.partnerId ? { partnerId: options.settings.partnerId } : {}),
  });
  const { managed, fresh } = splitManaged(account.organizations, options);
  return {
    options,
    client,
    host: await adoptionHost(options.settings),
    account,
    managed,
    queue: inKeyOrder(fresh, options),
    file: new ImportFile(options.inventoryName, options.write, options.existing?.text),
    owners: domainOwners(options.existing?.inventory),
    candidates: [],
    leftOut: [],
    failedChecks: 0,
    done: 0,
    requestsBefore,
    startedAt: performance.now(),
  };
}

/**
 * Reads the partner's account and writes what it holds as inventory
 * entries that adopt every object by id, a batch of organisations at a
 * time: each write is the whole file, which reads back valid, so an import
 * cut short leaves every entry written so far, and the organisations the
 * file holds are not read again by the next one. Sends no request that
 * changes anything. Writes nothing when an `only` id is not the partner's.
 */
export async function importAccount(options: ImportOptions): Promise<ImportReport> {
  const run = await startRun(options);
  if (run.account.missing.length > 0) return importReport(run);
  try {
    for (let start = 0; start < run.queue.length; start += IMPORT_BATCH) {
      const end = start + IMPORT_BATCH;
      await importBatch(run, run.queue.slice(start, end), end >= run.queue.length);
    }
    finish(run);
  } catch (error) {
    // What was read before the failure is kept; a failing write leaves the file as it was, and the first error stands.
    try {
      run.file.flush();
    } catch {}
    throw new ImportIncomplete(progressOf(run), options.inventoryName, error);
  }
  return importReport(run);
}
