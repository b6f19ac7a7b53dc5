import { stringify } from "yaml";
import type { z } from "zod";
import type { Plan } from "../api";
import { declarationOf } from "../inventory/declare";
import { InventoryError, type InventoryTenant, parseInventory } from "../inventory/inventory";
import type { DynamicProviderHost } from "../runtime/host";
import { describeValue, valueAt } from "../runtime/values";
import { tenantPlan } from "../tenant/plan";
import { TenantDomain, TenantWebhook } from "../tenant/schema";
import type { TenantOnDelete } from "../tenant/tenant";
import type { DiscoveredOrganization } from "./account";
import { adoptionDeclarations, type Declaration, declarationProblems } from "./adoption";
import {
  entryWithout,
  LEFT_OUT,
  type LeftOutOrganization,
  type ProposedTenant,
  proposeTenant,
  type TenantEntry,
} from "./entries";
import type { KeyedOrganization } from "./selection";

// Judging each organisation an import read: its entry proposed, then
// checked as the inventory and a preview check it (and, with --check, its
// adoption tried); what the checks refuse is trimmed from the entry or
// leaves the organisation out, with the reason.

/** A tenant on its way into the file: its proposal and its entry as the inventory parses it. */
export interface Candidate {
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

/** Each organisation's proposal, or the reason it gets no entry. */
function proposalsOf(
  discovered: readonly { keyed: KeyedOrganization; objects: DiscoveredOrganization }[],
  onDelete: TenantOnDelete,
  plans: readonly Plan[],
): { proposals: ProposedTenant[]; leftOut: LeftOutOrganization[] } {
  const proposals: ProposedTenant[] = [];
  const leftOut: LeftOutOrganization[] = [];
  for (const { keyed, objects } of discovered) {
    const proposal = proposeTenant(objects, {
      key: keyed.key,
      onDelete,
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

/** One batch judged: the candidates that go into the file, the organisations left out, and how many failed --check. */
export interface Judgement {
  candidates: Candidate[];
  leftOut: LeftOutOrganization[];
  failedChecks: number;
}

/**
 * The batch's organisations judged: proposed, each domain given to the
 * first tenant listing it (`owners`, which it adds to), checked, and with
 * `check` their adoption tried.
 */
export async function judgeBatch(
  discovered: readonly { keyed: KeyedOrganization; objects: DiscoveredOrganization }[],
  context: {
    host: DynamicProviderHost;
    plans: readonly Plan[];
    owners: Map<string, string>;
    onDelete: TenantOnDelete;
    check: boolean;
  },
): Promise<Judgement> {
  const { host, plans } = context;
  const proposed = proposalsOf(discovered, context.onDelete, plans);
  const owned = withDomainsOwnedOnce(proposed.proposals, context.owners);
  const valid = splitOutcomes(await Promise.all(owned.map((proposal) => validated(host, proposal, plans))));
  const checked = context.check
    ? splitOutcomes(await Promise.all(valid.candidates.map((candidate) => adoptionChecked(host, candidate, plans))))
    : { candidates: valid.candidates, leftOut: [] };
  return {
    candidates: checked.candidates,
    leftOut: [...proposed.leftOut, ...valid.leftOut, ...checked.leftOut],
    failedChecks: checked.leftOut.length,
  };
}

/** The entry's tenant plan's length: the objects its tenant adopts. */
export function objectsOf(parsed: InventoryTenant): number {
  return tenantPlan(parsed.key, declarationOf(parsed), `${ENTRY_SOURCE}: ${parsed.label}`).length;
}
