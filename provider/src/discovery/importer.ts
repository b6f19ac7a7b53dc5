import { stringify } from "yaml";
import type { z } from "zod";
import type { Organization, Plan } from "../api";
import { type DmarcClient, requestsSent } from "../client";
import { declarationOf } from "../inventory/declare";
import { type Inventory, InventoryError, type InventoryTenant, parseInventory } from "../inventory/inventory";
import { clientFrom, type ProviderSettings } from "../runtime/config";
import type { DynamicProviderHost } from "../runtime/host";
import { describeValue, valueAt } from "../runtime/values";
import { tenantPlan } from "../tenant/plan";
import { TenantDomain, TenantWebhook } from "../tenant/schema";
import type { TenantOnDelete } from "../tenant/tenant";
import { type DiscoveredAccount, type DiscoveredOrganization, discoverAccount, discoverOrganization } from "./account";
import { adoptionDeclarations, adoptionHost, type Declaration, declarationProblems } from "./adoption";
import { appendedInventoryText, type InventoryAdditions, newInventoryText, withClosingComments } from "./document";
import {
  entryWithout,
  LEFT_OUT,
  type LeftOutOrganization,
  type ProposedTenant,
  proposeTenant,
  type TenantEntry,
} from "./entries";
import { type AssignedKey, assignKeys } from "./keys";
import { IMPORT_FORMAT_VERSION, type ImportProgress, type ImportReport, type ManagedOrganization } from "./report";

/** What removing an imported tenant from the file does unless told otherwise: nothing on the service. */
export const DEFAULT_IMPORT_ON_DELETE: TenantOnDelete = "keep";

export interface ImportOptions {
  /** The provider settings (`dmarc:*`): the service, the credentials, `requestsPerSecond`, `partnerId`. */
  settings: ProviderSettings;
  /** The file's name, for the report and messages. */
  inventoryName: string;
  /** The inventory to add to and its text; absent to write a new file. */
  existing?: { text: string; inventory: Inventory };
  /** Organisations and tenant keys the fleet's shards hold, each with its shard's name. */
  deployed?: { organizations: ReadonlyMap<string, string>; keys: ReadonlyMap<string, string> };
  /** Only these organisations. */
  only?: readonly string[];
  /** Each entry's `onDelete`; default {@link DEFAULT_IMPORT_ON_DELETE}. */
  onDelete?: TenantOnDelete;
  /** Try each entry's adoption (reads only) and leave out those that would not adopt cleanly. */
  check?: boolean;
  /** Writes the file's whole new text, at once: called as batches add to it (see {@link WRITE_TIME_SHARE}). */
  write: (text: string) => void;
  /** Told how far the import is after each batch. */
  progress?: (progress: ImportProgress) => void;
}

/**
 * Organisations read and checked at a time, and written at a time at the
 * service's pace (57 requests a minute, four an organisation: a batch is
 * about 45 s of work, the most an interrupted import reads again).
 */
export const IMPORT_BATCH = 10;

/**
 * The most of an import's time its file writes take. Each write is the
 * whole file, checked as the fleet reads it, so its cost grows with the
 * file: an import faster than the service's pace (the emulator, a generous
 * limit) holds batches back until the time since the last write is ten
 * times what that write took, which keeps 1,000 organisations linear.
 */
const WRITE_TIME_SHARE = 0.1;

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

/** A tenant on its way into the file: its proposal and its entry as the inventory parses it. */
interface Candidate {
  proposal: ProposedTenant;
  parsed: InventoryTenant;
}

const ENTRY_SOURCE = "import";

/** The entry as the inventory reads it, alone in a file; its problems as the inventory words them. */
function parseEntry(proposal: ProposedTenant): InventoryTenant | { problems: readonly string[] } {
  try {
    const [parsed] = parseInventory(stringify({ tenants: [proposal.entry] }), ENTRY_SOURCE).tenants;
    if (!parsed) throw new Error("the entry parsed to no tenant");
    return parsed;
  } catch (error) {
    if (error instanceof InventoryError) return { problems: error.problems };
    throw error;
  }
}

/** The entry's tenant plan, as the provider host takes it for an adoption. */
function declarationsOf(parsed: InventoryTenant, plans: readonly Plan[]): Declaration[] {
  const label = `${ENTRY_SOURCE}: ${parsed.label}`;
  return adoptionDeclarations(tenantPlan(parsed.key, declarationOf(parsed), label), plans, label);
}

function leftOutWhole(proposal: ProposedTenant, reason: string): LeftOutOrganization {
  return { organizationId: proposal.organizationId, name: proposal.entry.name, reason };
}

/** Each declaration with its problems, the entry's whole list at once. */
async function problemsOf(
  host: DynamicProviderHost,
  declarations: readonly Declaration[],
  adopt: boolean,
): Promise<{ declaration: Declaration; problems: string[] }[]> {
  return Promise.all(
    declarations.map(async (declaration) => ({
      declaration,
      problems: await declarationProblems(host, declaration, adopt),
    })),
  );
}

/** A domain or webhook of an entry that is left out of it, and why. */
interface Refusal {
  kind: "domain" | "webhook";
  name: string;
  what: string;
  reason: string;
}

/** The proposal without the refused domains and webhooks, each said on a line of its own. */
function without(proposal: ProposedTenant, refusals: readonly Refusal[]): ProposedTenant {
  if (refusals.length === 0) return proposal;
  const named = (kind: Refusal["kind"]) => refusals.filter((refusal) => refusal.kind === kind).map(({ name }) => name);
  return {
    ...proposal,
    entry: entryWithout(proposal.entry, { domains: named("domain"), webhooks: named("webhook") }),
    leftOut: [...proposal.leftOut, ...refusals.map(({ what, reason }) => LEFT_OUT.refused(what, reason))],
  };
}

/** What the schema says against a value, one clause per issue; undefined when it takes the value. */
function schemaRefusal(schema: z.ZodType, value: object): string | undefined {
  const parsed = schema.safeParse(value);
  if (parsed.success) return undefined;
  return parsed.error.issues
    .map((issue) => `${issue.path.join(".")} ${issue.message}; got ${describeValue(valueAt(value, issue.path))}`)
    .join("; ");
}

/** The entry's domains and webhooks that the Tenant's own schemas refuse. */
function tenantSchemaRefusals(entry: TenantEntry): Refusal[] {
  const domains = (entry.domains ?? []).map((domain) => ({
    kind: "domain" as const,
    name: domain.name,
    what: `domain ${domain.name}`,
    reason: schemaRefusal(TenantDomain, domain),
  }));
  const webhooks = (entry.webhooks ?? []).map((webhook) => ({
    kind: "webhook" as const,
    name: webhook.name,
    what: `webhook "${webhook.name}" (${entry.ids.webhooks?.[webhook.name]})`,
    reason: schemaRefusal(TenantWebhook, webhook),
  }));
  return [...domains, ...webhooks].flatMap(({ reason, ...refusal }) =>
    reason === undefined ? [] : [{ ...refusal, reason }],
  );
}

/**
 * The entry checked as the inventory and a preview check it, with no
 * request: a domain or webhook the Tenant's schemas or its resources refuse
 * is left out of the entry alone; a refused organisation, group or
 * subscription leaves the whole entry out.
 */
async function validated(
  host: DynamicProviderHost,
  proposed: ProposedTenant,
  plans: readonly Plan[],
): Promise<Candidate | LeftOutOrganization> {
  const proposal = without(proposed, tenantSchemaRefusals(proposed.entry));
  const parsed = parseEntry(proposal);
  if ("problems" in parsed) return leftOutWhole(proposal, parsed.problems.join("; "));
  let declarations: Declaration[];
  try {
    declarations = declarationsOf(parsed, plans);
  } catch (error) {
    return leftOutWhole(proposal, (error as Error).message);
  }
  const refused = (await problemsOf(host, declarations, false)).filter((checked) => checked.problems.length > 0);
  const core = refused.filter((checked) => checked.declaration.part.kind === "tenant");
  if (core.length > 0) return leftOutWhole(proposal, core.flatMap((checked) => checked.problems).join("; "));
  if (refused.length === 0) return { proposal, parsed };
  const trimmed = without(
    proposal,
    refused.flatMap(({ declaration: { part, what }, problems }) =>
      part.kind === "domain" || part.kind === "webhook"
        ? [{ kind: part.kind, name: part.name, what, reason: problems.join("; ") }]
        : [],
    ),
  );
  const reparsed = parseEntry(trimmed);
  if ("problems" in reparsed) return leftOutWhole(proposal, reparsed.problems.join("; "));
  return { proposal: trimmed, parsed: reparsed };
}

/** The candidate, or the reason its adoption would not go cleanly. */
async function adoptionChecked(
  host: DynamicProviderHost,
  candidate: Candidate,
  plans: readonly Plan[],
): Promise<Candidate | LeftOutOrganization> {
  const declarations = declarationsOf(candidate.parsed, plans);
  const problems = (await problemsOf(host, declarations, true)).flatMap(({ declaration, problems }) =>
    problems.map((problem) => `${declaration.what}: ${problem}`),
  );
  if (problems.length === 0) return candidate;
  return leftOutWhole(candidate.proposal, `it would not adopt cleanly: ${problems.join("; ")}`);
}

/** Who lists each domain so far, for the messages: the inventory's tenants, then the new ones as they come. */
function domainOwners(existing: Inventory | undefined): Map<string, string> {
  const owners = new Map<string, string>();
  for (const tenant of existing?.tenants ?? []) {
    for (const domain of tenant.domains) owners.set(domain.name, `tenant "${tenant.key}" of the inventory`);
  }
  return owners;
}

/** Gives each domain to the first tenant listing it (`owners`, which it adds to), the proposals in key order. */
function withDomainsOwnedOnce(proposals: readonly ProposedTenant[], owners: Map<string, string>): ProposedTenant[] {
  return proposals.map((proposal) => {
    const taken = (proposal.entry.domains ?? []).filter((domain) => owners.has(domain.name));
    for (const domain of proposal.entry.domains ?? []) {
      if (!owners.has(domain.name)) owners.set(domain.name, `tenant "${proposal.entry.key}"`);
    }
    if (taken.length === 0) return proposal;
    return {
      ...proposal,
      entry: entryWithout(proposal.entry, { domains: taken.map((domain) => domain.name) }),
      leftOut: [
        ...proposal.leftOut,
        ...taken.map((domain) => LEFT_OUT.domainOfAnotherTenant(domain.name, owners.get(domain.name) ?? "")),
      ],
    };
  });
}

/** Organisations the inventory or the fleet holds already, and the others: only those are read further. */
function splitManaged(
  organizations: readonly Organization[],
  options: ImportOptions,
): { managed: ManagedOrganization[]; fresh: Organization[] } {
  const holders = new Map<string, string>(options.deployed?.organizations ?? []);
  for (const tenant of options.existing?.inventory.tenants ?? []) {
    if (tenant.ids?.organization) holders.set(tenant.ids.organization, `tenant "${tenant.key}" of the inventory`);
  }
  const managed: ManagedOrganization[] = [];
  const fresh: Organization[] = [];
  for (const organization of organizations) {
    const by = holders.get(organization.id);
    if (by === undefined) fresh.push(organization);
    else managed.push({ organizationId: organization.id, name: organization.name, by });
  }
  return { managed, fresh };
}

/** Keys in use: the inventory's tenants' and those in the shards' state. */
function takenKeys(options: ImportOptions): Map<string, string> {
  const taken = new Map<string, string>();
  for (const [key, shard] of options.deployed?.keys ?? []) taken.set(key, `a tenant of shard ${shard}`);
  for (const tenant of options.existing?.inventory.tenants ?? []) taken.set(tenant.key, "a tenant of the inventory");
  return taken;
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

/** A tenant's comment lines: why its key is what it is, then what its entry leaves out. */
function commentsOf(proposal: ProposedTenant): string[] {
  return [...(proposal.keyNote ? [proposal.keyNote] : []), ...proposal.leftOut.map((line) => `left out: ${line}`)];
}

/** An organisation the import has come to, with the key it gets. */
interface KeyedOrganization {
  organization: Organization;
  key: AssignedKey;
}

/**
 * The new organisations with their keys, in key order: the order their
 * entries are written in. Keys depend on the organisations' names, ages and
 * ids alone, so an import that continues one cut short gives the same ones.
 */
function inKeyOrder(fresh: readonly Organization[], options: ImportOptions): KeyedOrganization[] {
  const keys = assignKeys(fresh, takenKeys(options));
  return fresh
    .map((organization) => {
      const key = keys.get(organization.id);
      if (!key) throw new Error(`no key was assigned to organisation ${organization.id}`);
      return { organization, key };
    })
    .sort((a, b) => a.key.key.localeCompare(b.key.key));
}

/** Each organisation's proposal, or the reason it gets no entry. */
function proposalsOf(
  discovered: readonly { keyed: KeyedOrganization; objects: DiscoveredOrganization }[],
  options: ImportOptions,
  plans: readonly Plan[],
): { proposals: ProposedTenant[]; leftOut: LeftOutOrganization[] } {
  const proposals: ProposedTenant[] = [];
  const leftOut: LeftOutOrganization[] = [];
  for (const { keyed, objects } of discovered) {
    const proposal = proposeTenant(objects, {
      key: keyed.key,
      onDelete: options.onDelete ?? DEFAULT_IMPORT_ON_DELETE,
      plans,
    });
    if ("reason" in proposal) leftOut.push(proposal);
    else proposals.push(proposal);
  }
  return { proposals, leftOut };
}

/** The outcomes split: candidates that go on, organisations left out. */
function splitOutcomes(outcomes: readonly (Candidate | LeftOutOrganization)[]): {
  candidates: Candidate[];
  leftOut: LeftOutOrganization[];
} {
  return {
    candidates: outcomes.filter((outcome): outcome is Candidate => !("reason" in outcome)),
    leftOut: outcomes.filter((outcome): outcome is LeftOutOrganization => "reason" in outcome),
  };
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
  /** The file's text as last written, or as it was. */
  text: string | undefined;
  owners: Map<string, string>;
  candidates: Candidate[];
  /** Candidates read but not in the file yet. */
  pending: Candidate[];
  /** When the file was last written, and how long that took (ms, `performance.now()`). */
  lastWrite: { at: number; tookMs: number };
  leftOut: LeftOutOrganization[];
  failedChecks: number;
  done: number;
  writes: number;
  requestsBefore: number;
  startedAt: number;
}

function progressOf(run: ImportRun): ImportProgress {
  return {
    done: run.done,
    total: run.queue.length,
    written: run.candidates.length - run.pending.length,
    leftOut: run.leftOut.length,
    managed: run.managed.length,
    requests: requestsSent() - run.requestsBefore,
    elapsedMs: performance.now() - run.startedAt,
  };
}

/** The file with the additions, checked, handed to the writer; nothing when they add nothing. */
function write(run: ImportRun, additions: InventoryAdditions, candidates: readonly Candidate[]): void {
  const text = run.text === undefined ? newInventoryText(additions) : appendedInventoryText(run.text, additions);
  if (text === undefined) return;
  checkWritten(text, run.options.inventoryName, candidates);
  run.options.write(text);
  run.text = text;
  run.writes += 1;
}

/** Writes the entries held back, if any, after those in the file. */
function writePending(run: ImportRun): void {
  if (run.pending.length === 0) return;
  const started = performance.now();
  const tenants = run.pending.map(({ proposal }) => ({ entry: proposal.entry, comments: commentsOf(proposal) }));
  write(run, { tenants, trailing: [] }, run.pending);
  run.pending = [];
  const ended = performance.now();
  run.lastWrite = { at: ended, tookMs: ended - started };
}

/** Whether the entries held back go to the file now: after the last batch, or once writing is cheap beside reading. */
function writeDue(run: ImportRun, last: boolean): boolean {
  return last || (performance.now() - run.lastWrite.at) * WRITE_TIME_SHARE >= run.lastWrite.tookMs;
}

/** The organisations' entries: read, proposed, checked, then written after those before them. */
async function importBatch(run: ImportRun, batch: readonly KeyedOrganization[], last: boolean): Promise<void> {
  const { options, client, host, account } = run;
  const discovered = await Promise.all(
    batch.map(async (keyed) => ({ keyed, objects: await discoverOrganization(client, keyed.organization) })),
  );
  const proposed = proposalsOf(discovered, options, account.plans);
  const owned = withDomainsOwnedOnce(proposed.proposals, run.owners);
  const valid = splitOutcomes(await Promise.all(owned.map((proposal) => validated(host, proposal, account.plans))));
  const checked = options.check
    ? splitOutcomes(
        await Promise.all(valid.candidates.map((candidate) => adoptionChecked(host, candidate, account.plans))),
      )
    : { candidates: valid.candidates, leftOut: [] };
  run.candidates.push(...checked.candidates);
  run.pending.push(...checked.candidates);
  if (writeDue(run, last)) writePending(run);
  run.leftOut.push(...proposed.leftOut, ...valid.leftOut, ...checked.leftOut);
  run.failedChecks += checked.leftOut.length;
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
  if (run.options.existing || run.text === undefined) {
    write(run, { tenants: [], trailing }, []);
    return;
  }
  if (trailing.length === 0) return;
  run.text = withClosingComments(run.text, trailing);
  run.options.write(run.text);
  run.writes += 1;
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
      objects: tenantPlan(parsed.key, declarationOf(parsed), `${ENTRY_SOURCE}: ${parsed.label}`).length,
      ...(proposal.keyNote ? { keyNote: proposal.keyNote } : {}),
      leftOut: proposal.leftOut,
    })),
    leftOut: run.leftOut,
    managed: run.managed,
    account: accountNotes(run.account),
    missing: run.account.missing,
    checked: run.options.check === true,
    failedChecks: run.failedChecks,
    changed: run.writes > 0,
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
    text: options.existing?.text,
    owners: domainOwners(options.existing?.inventory),
    candidates: [],
    pending: [],
    lastWrite: { at: performance.now(), tookMs: 0 },
    leftOut: [],
    failedChecks: 0,
    done: 0,
    writes: 0,
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
      writePending(run);
    } catch {}
    throw new ImportIncomplete(progressOf(run), options.inventoryName, error);
  }
  return importReport(run);
}

/**
 * The whole file as the fleet will read it (its `defaults:` applied, every
 * cross-check made) must hold each new tenant exactly as it was checked.
 */
function checkWritten(text: string, source: string, candidates: readonly Candidate[]): void {
  const written = new Map(parseInventory(text, source).tenants.map((tenant) => [tenant.key, tenant]));
  for (const { parsed } of candidates) {
    const { label: _checkedLabel, ...checked } = parsed;
    const { label: _writtenLabel, ...found } = written.get(parsed.key) ?? { label: "" };
    if (JSON.stringify(found) !== JSON.stringify(checked)) {
      throw new Error(`${source}: tenant "${parsed.key}" would not read back as it was checked`);
    }
  }
}
