import { stringify } from "yaml";
import type { z } from "zod";
import type { Plan } from "../api";
import { declarationOf } from "../inventory/declare";
import { type Inventory, InventoryError, type InventoryTenant, parseInventory } from "../inventory/inventory";
import { clientFrom, type ProviderSettings } from "../runtime/config";
import type { DynamicProviderHost } from "../runtime/host";
import { describeValue, valueAt } from "../runtime/values";
import { tenantPlan } from "../tenant/plan";
import { TenantDomain, TenantWebhook } from "../tenant/schema";
import type { TenantOnDelete } from "../tenant/tenant";
import { type DiscoveredAccount, type DiscoveredOrganization, discoverAccount } from "./account";
import { adoptionDeclarations, adoptionHost, type Declaration, declarationProblems } from "./adoption";
import { appendedInventoryText, type InventoryAdditions, newInventoryText } from "./document";
import {
  entryWithout,
  LEFT_OUT,
  type LeftOutOrganization,
  type ProposedTenant,
  proposeTenant,
  type TenantEntry,
} from "./entries";
import { assignKeys } from "./keys";
import { IMPORT_FORMAT_VERSION, type ImportReport, type ManagedOrganization } from "./report";

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
}

export interface ImportResult {
  report: ImportReport;
  /** The file's new text; undefined when there is nothing to add. */
  text: string | undefined;
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

/** Gives each domain to the first tenant listing it: the inventory's tenants, then the new ones in key order. */
function withDomainsOwnedOnce(proposals: readonly ProposedTenant[], existing: Inventory | undefined): ProposedTenant[] {
  const owners = new Map<string, string>();
  for (const tenant of existing?.tenants ?? []) {
    for (const domain of tenant.domains) owners.set(domain.name, `tenant "${tenant.key}" of the inventory`);
  }
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

/** Organisations the inventory or the fleet holds already, and the others. */
function splitManaged(
  account: DiscoveredAccount,
  options: ImportOptions,
): { managed: ManagedOrganization[]; fresh: DiscoveredOrganization[] } {
  const holders = new Map<string, string>(options.deployed?.organizations ?? []);
  for (const tenant of options.existing?.inventory.tenants ?? []) {
    if (tenant.ids?.organization) holders.set(tenant.ids.organization, `tenant "${tenant.key}" of the inventory`);
  }
  const managed: ManagedOrganization[] = [];
  const fresh: DiscoveredOrganization[] = [];
  for (const discovered of account.organizations) {
    const by = holders.get(discovered.organization.id);
    if (by === undefined) fresh.push(discovered);
    else managed.push({ organizationId: discovered.organization.id, name: discovered.organization.name, by });
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

/** Each new organisation's proposal, tenants in key order, or the reason it gets no entry. */
function proposalsOf(
  account: DiscoveredAccount,
  fresh: readonly DiscoveredOrganization[],
  options: ImportOptions,
): { proposals: ProposedTenant[]; leftOut: LeftOutOrganization[] } {
  const keys = assignKeys(
    fresh.map((discovered) => discovered.organization),
    takenKeys(options),
  );
  const proposals: ProposedTenant[] = [];
  const leftOut: LeftOutOrganization[] = [];
  for (const discovered of fresh) {
    const key = keys.get(discovered.organization.id);
    if (!key) throw new Error(`no key was assigned to organisation ${discovered.organization.id}`);
    const proposal = proposeTenant(discovered, {
      key,
      onDelete: options.onDelete ?? DEFAULT_IMPORT_ON_DELETE,
      plans: account.plans,
    });
    if ("reason" in proposal) leftOut.push(proposal);
    else proposals.push(proposal);
  }
  proposals.sort((a, b) => a.entry.key.localeCompare(b.entry.key));
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

/** The file's new entries, each with its comments, and the lines that say what was left out and why. */
function additionsOf(
  candidates: readonly Candidate[],
  leftOut: readonly LeftOutOrganization[],
  accountLines: readonly string[],
): InventoryAdditions {
  return {
    tenants: candidates.map(({ proposal }) => ({ entry: proposal.entry, comments: commentsOf(proposal) })),
    trailing: [
      ...leftOut.map(
        (organization) =>
          `left out: organisation "${organization.name}" (${organization.organizationId}): ${organization.reason}`,
      ),
      ...accountLines,
    ],
  };
}

/** What was found, written and left out, for the report. */
interface ImportOutcome {
  account: DiscoveredAccount;
  managed: ManagedOrganization[];
  candidates: Candidate[];
  leftOut: LeftOutOrganization[];
  accountLines: string[];
  failedChecks: number;
  text: string | undefined;
}

function importReport(options: ImportOptions, outcome: ImportOutcome): ImportReport {
  return {
    formatVersion: IMPORT_FORMAT_VERSION,
    inventory: options.inventoryName,
    mode: options.existing ? "append" : "new",
    organizations: outcome.account.organizations.length,
    written: outcome.candidates.map(({ proposal, parsed }) => ({
      key: proposal.entry.key,
      name: proposal.entry.name,
      organizationId: proposal.organizationId,
      domains: proposal.entry.domains?.length ?? 0,
      webhooks: proposal.entry.webhooks?.length ?? 0,
      objects: tenantPlan(parsed.key, declarationOf(parsed), `${ENTRY_SOURCE}: ${parsed.label}`).length,
      ...(proposal.keyNote ? { keyNote: proposal.keyNote } : {}),
      leftOut: proposal.leftOut,
    })),
    leftOut: outcome.leftOut,
    managed: outcome.managed,
    account: outcome.accountLines,
    missing: outcome.account.missing,
    checked: options.check === true,
    failedChecks: outcome.failedChecks,
    changed: outcome.text !== undefined,
  };
}

/**
 * Reads the partner's account and writes what it holds as inventory
 * entries that adopt every object by id. Sends no request that changes
 * anything; answers the file's new text, which the caller writes.
 */
export async function importAccount(options: ImportOptions): Promise<ImportResult> {
  const client = clientFrom(options.settings);
  // The adoption check reads through this same cached client: both see this run's lists, and only these.
  client.forgetLists();
  const account = await discoverAccount(client, {
    ...(options.only ? { only: options.only } : {}),
    ...(options.settings.partnerId ? { partnerId: options.settings.partnerId } : {}),
  });
  const { managed, fresh } = splitManaged(account, options);
  const proposed = proposalsOf(account, fresh, options);
  const host = await adoptionHost(options.settings);
  const owned = withDomainsOwnedOnce(proposed.proposals, options.existing?.inventory);
  const valid = splitOutcomes(await Promise.all(owned.map((proposal) => validated(host, proposal, account.plans))));
  const checked = options.check
    ? splitOutcomes(
        await Promise.all(valid.candidates.map((candidate) => adoptionChecked(host, candidate, account.plans))),
      )
    : { candidates: valid.candidates, leftOut: [] };
  const { candidates } = checked;
  const leftOut = [...proposed.leftOut, ...valid.leftOut, ...checked.leftOut].sort(
    (a, b) => a.name.localeCompare(b.name) || a.organizationId.localeCompare(b.organizationId),
  );
  const accountLines = accountNotes(account);
  const additions = additionsOf(candidates, leftOut, accountLines);
  const text = options.existing ? appendedInventoryText(options.existing.text, additions) : newInventoryText(additions);
  if (text !== undefined) checkWritten(text, options.inventoryName, candidates);
  const failedChecks = checked.leftOut.length;
  return {
    text,
    report: importReport(options, { account, managed, candidates, leftOut, accountLines, failedChecks, text }),
  };
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
