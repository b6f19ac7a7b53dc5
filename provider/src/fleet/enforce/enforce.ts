import { readFileSync, writeFileSync } from "node:fs";
import { basename } from "node:path";
import { requestsSent } from "../../client";
import { domainPolicyOf, type Inventory, parseInventory } from "../../inventory/inventory";
import { clientFrom, type ProviderSettings } from "../../runtime/config";
import { type EvidenceAsk, readEvidence } from "./evidence";
import { type Decision, decide, type EvidenceRead, evidenceWindow, MOVES, needsEvidence } from "./ramp";
import { writtenMoves } from "./write";

// `dmarc-fleet enforce`: the policy moves the evidence supports, proposed
// per domain and, with `--write`, written into the inventory. It publishes
// nothing: the pull request is merged, and `up` republishes the records
// whose stage changed (only their shards run).

export interface EnforceOptions {
  inventoryPath: string;
  /** The provider settings (`dmarc:*`): the service and the credentials the evidence is read with. */
  settings: ProviderSettings;
  /** The day of the decision, `YYYY-MM-DD`; default today (UTC). */
  today?: string;
  /** Write the moves into the inventory. */
  write?: boolean;
}

export interface DomainDecision {
  domain: string;
  decision: Decision;
}

export interface TenantDecisions {
  key: string;
  name: string;
  domains: DomainDecision[];
}

export type DecisionCounts = Record<Decision["kind"], number>;

export interface EnforceReport {
  command: "enforce";
  inventory: string;
  today: string;
  /** Domains whose evidence was asked for, and the requests it took (a token request included). */
  read: { domains: number; requests: number; failed: number };
  tenants: TenantDecisions[];
  totals: DecisionCounts;
  /** Whether the moves were written into the inventory. */
  written: boolean;
}

/** Each domain with a ramp, with what to read for it (nothing when its stage needs no evidence). */
function asksOf(inventory: Inventory, today: string): EvidenceAsk[] {
  return inventory.tenants.flatMap((tenant) =>
    tenant.domains.flatMap((domain) => {
      const policy = domainPolicyOf(tenant, domain.name);
      const window = policy && needsEvidence(policy, today) ? evidenceWindow(policy, today) : undefined;
      return window ? [{ domain: domain.name, ...window }] : [];
    }),
  );
}

function decisionsOf(inventory: Inventory, today: string, evidence: ReadonlyMap<string, EvidenceRead>) {
  return inventory.tenants.map((tenant) => ({
    key: tenant.key,
    name: tenant.name,
    domains: tenant.domains.flatMap((domain) => {
      const policy = domainPolicyOf(tenant, domain.name);
      return policy ? [{ domain: domain.name, decision: decide(policy, today, evidence.get(domain.name)) }] : [];
    }),
  }));
}

/** How many domains of each decision the tenants have. */
export function countsOf(tenants: readonly TenantDecisions[]): DecisionCounts {
  const counts: DecisionCounts = { start: 0, advance: 0, back: 0, hold: 0, target: 0 };
  for (const { decision } of tenants.flatMap((tenant) => tenant.domains)) counts[decision.kind]++;
  return counts;
}

/** The moves as the file writes them: each domain's new stage and since, by its place in the file. */
function movesOf(inventory: Inventory, tenants: readonly TenantDecisions[]) {
  return tenants.flatMap((decided, tenantIndex) =>
    decided.domains.flatMap(({ domain, decision }) => {
      if (decision.kind === "hold" || decision.kind === "target") return [];
      const domainIndex = inventory.tenants[tenantIndex]?.domains.findIndex((entry) => entry.name === domain) ?? -1;
      const stage = decision.kind === "start" ? decision.stage : decision.to;
      return [{ tenantIndex, domainIndex, stage, since: decision.since }];
    }),
  );
}

const todayUtc = () => new Date().toISOString().slice(0, 10);

/** Reads the evidence of every domain that needs it, decides each domain, and writes the moves when asked. */
export async function runEnforce(options: EnforceOptions): Promise<EnforceReport> {
  const source = basename(options.inventoryPath);
  const text = readFileSync(options.inventoryPath, "utf8");
  const inventory = parseInventory(text, source);
  const today = options.today ?? todayUtc();
  const asks = asksOf(inventory, today);
  const before = requestsSent();
  const evidence =
    asks.length > 0 ? await readEvidence(clientFrom(options.settings), asks) : new Map<string, EvidenceRead>();
  const requests = requestsSent() - before;
  // In file order, every tenant: a move is written at its tenant's place.
  const decided = decisionsOf(inventory, today, evidence);
  const tenants = decided.filter((tenant) => tenant.domains.length > 0);
  const failed = [...evidence.values()].filter((read) => "failure" in read).length;
  const moves = movesOf(inventory, decided);
  const written = options.write === true && moves.length > 0;
  if (written) writeFileSync(options.inventoryPath, writtenMoves(text, source, moves));
  return {
    command: "enforce",
    inventory: source,
    today,
    read: { domains: asks.length, requests, failed },
    tenants,
    totals: countsOf(tenants),
    written,
  };
}

/** Domains whose decision changes the file. */
export function movesCount(counts: DecisionCounts): number {
  return MOVES.reduce((sum, kind) => sum + counts[kind], 0);
}
