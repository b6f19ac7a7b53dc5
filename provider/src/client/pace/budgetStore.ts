import { createHash } from "node:crypto";
// Where the runs of one partner keep the budget they share. The service
// counts the partner's requests, whoever sends them: every run, CI job and
// team of a partner books each request's turn in one place, so together
// they keep to one pace. A store only books turns, atomically; when each
// turn comes is the same rule everywhere (GCRA: a turn an interval after the
// one booked before it, or now when that has passed).

/** A place the partner's runs book their turns in. */
export interface BudgetStore {
  /** How the progress lines and `--json` name it: its kind and where it is, never a password. */
  readonly kind: BudgetKind;
  readonly where: string;
  /**
   * Books the partner's next turn: `intervalMs` after the one booked before
   * it, or now when that has passed. Resolves with the milliseconds until it.
   */
  book(intervalMs: number): Promise<number>;
  close(): Promise<void>;
}

/** Where a run's pace is shared: a database every job reaches, this machine, or nowhere (the run adapts alone). */
export type BudgetKind = "postgres" | "machine" | "adaptive";

/** The `budgetStore` setting's words besides a database URL. */
const BUDGET_STORE_WORDS = ["auto", "machine", "off"] as const;
const POSTGRES_URL = /^postgres(ql)?:\/\//;

/** Why a `budgetStore` value cannot be used, or undefined when it can. */
export function budgetStoreProblem(value: string): string | undefined {
  if ((BUDGET_STORE_WORDS as readonly string[]).includes(value) || value.startsWith("machine:")) return undefined;
  if (POSTGRES_URL.test(value)) return URL.canParse(value) ? undefined : "is not a PostgreSQL URL that can be read";
  return `must be ${BUDGET_STORE_WORDS.map((word) => `"${word}"`).join(", ")}, "machine:<folder>" or a postgres:// URL`;
}

/**
 * The partner a budget is kept for: the service's address and the client id
 * (or the token), hashed, so that the store holds nothing that signs in and
 * a rotated secret keeps its budget.
 */
export function partnerKeyOf(address: string, identity: string): string {
  return createHash("sha256").update(`${address}\n${identity}`).digest("hex").slice(0, 32);
}

/** Whether a URL is a PostgreSQL server's, as Pulumi's state backends and the `budgetStore` setting write it. */
export function isPostgresUrl(url: string | undefined): boolean {
  return url !== undefined && POSTGRES_URL.test(url);
}
