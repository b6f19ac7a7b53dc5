import { readFileSync, writeFileSync } from "node:fs";
import { basename } from "node:path";
import { requestsSent } from "../../client";
import { domainPolicyOf, type Inventory, parseInventory } from "../../inventory/inventory";
import { clientFrom, type ProviderSettings } from "../../runtime/config";
import type { DomainPolicy, Stage } from "../../tenant/policy";
import { type EvidenceAsk, readEvidence } from "./evidence";
import { type Decision, decide, type EvidenceRead, evidenceWindow, MOVES, needsEvidence } from "./ramp";
import { type PolicyMove, writtenMoves } from "./write";

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

interface EnforceReportBase {
  command: "enforce";
  today: string;
  /** Domains whose evidence was asked for, and the requests it took (a token request included). */
  read: { domains: number; requests: number; failed: number };
  tenants: TenantDecisions[];
  totals: DecisionCounts;
  /** Whether the moves were written into the file. */
  written: boolean;
}

/** What a run decided, for the inventory or for a program's stack (its configuration file). */
export type EnforceReport = EnforceReportBase & ({ inventory: string } | { stack: string; config: string });

/** A domain and its ramp, with the others its file lists together (an inventory's tenant, a stack). */
export interface RampGroup {
  key: string;
  name: string;
  domains: { domain: string; policy: DomainPolicy }[];
}

/** Each domain with a ramp, with what to read for it (nothing when its stage needs no evidence). */
function asksOf(groups: readonly RampGroup[], today: string): EvidenceAsk[] {
  return groups.flatMap((group) =>
    group.domains.flatMap(({ domain, policy }) => {
      const window = needsEvidence(policy, today) ? evidenceWindow(policy, today) : undefined;
      return window ? [{ domain, ...window }] : [];
    }),
  );
}

/**
 * Reads the evidence of every domain that needs it, one request per window,
 * and decides each domain; the groups come back in their order, each whole,
 * so a move is written at its place.
 */
export async function decideRamps(groups: readonly RampGroup[], settings: ProviderSettings, today: string) {
  const asks = asksOf(groups, today);
  const before = requestsSent();
  const evidence = asks.length > 0 ? await readEvidence(clientFrom(settings), asks) : new Map<string, EvidenceRead>();
  const requests = requestsSent() - before;
  const failed = [...evidence.values()].filter((read) => "failure" in read).length;
  const decided: TenantDecisions[] = groups.map((group) => ({
    key: group.key,
    name: group.name,
    domains: group.domains.map(({ domain, policy }) => ({
      domain,
      decision: decide(policy, today, evidence.get(domain)),
    })),
  }));
  return { decided, read: { domains: asks.length, requests, failed } };
}

/** The inventory's tenants as ramp groups, every tenant in file order, each with its domains that have a ramp. */
function groupsOf(inventory: Inventory): RampGroup[] {
  return inventory.tenants.map((tenant) => ({
    key: tenant.key,
    name: tenant.name,
    domains: tenant.domains.flatMap((domain) => {
      const policy = domainPolicyOf(tenant, domain.name);
      return policy ? [{ domain: domain.name, policy }] : [];
    }),
  }));
}

/** How many domains of each decision the tenants have. */
export function countsOf(tenants: readonly TenantDecisions[]): DecisionCounts {
  const counts: DecisionCounts = { start: 0, advance: 0, back: 0, hold: 0, target: 0 };
  for (const { decision } of tenants.flatMap((tenant) => tenant.domains)) counts[decision.kind]++;
  return counts;
}

/** A decision that changes the file, as the domain's new stage and since; undefined for a hold or at target. */
export function moveOf(decision: Decision): { stage: Stage; since: string } | undefined {
  if (decision.kind === "hold" || decision.kind === "target") return undefined;
  return { stage: decision.kind === "start" ? decision.stage : decision.to, since: decision.since };
}

/** The moves as the file writes them: each domain's new stage and since, by its place in the file. */
function movesOf(inventory: Inventory, tenants: readonly TenantDecisions[]): PolicyMove[] {
  return tenants.flatMap((decided, tenantIndex) =>
    decided.domains.flatMap(({ domain, decision }) => {
      const move = moveOf(decision);
      if (move === undefined) return [];
      const domainIndex = inventory.tenants[tenantIndex]?.domains.findIndex((entry) => entry.name === domain) ?? -1;
      return [{ tenantIndex, domainIndex, ...move }];
    }),
  );
}

export const todayUtc = () => new Date().toISOString().slice(0, 10);

/** Reads the evidence of every domain that needs it, decides each domain, and writes the moves when asked. */
export async function runEnforce(options: EnforceOptions): Promise<EnforceReport> {
  const source = basename(options.inventoryPath);
  const text = readFileSync(options.inventoryPath, "utf8");
  const inventory = parseInventory(text, source);
  const today = options.today ?? todayUtc();
  const { decided, read } = await decideRamps(groupsOf(inventory), options.settings, today);
  const tenants = decided.filter((tenant) => tenant.domains.length > 0);
  const moves = movesOf(inventory, decided);
  const written = options.write === true && moves.length > 0;
  if (written) writeFileSync(options.inventoryPath, writtenMoves(text, source, moves));
  return { command: "enforce", inventory: source, today, read, tenants, totals: countsOf(tenants), written };
}

/** Domains whose decision changes the file. */
export function movesCount(counts: DecisionCounts): number {
  return MOVES.reduce((sum, kind) => sum + counts[kind], 0);
}
