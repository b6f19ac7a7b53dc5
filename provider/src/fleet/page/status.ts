import { type PageShard, type PageTenant, type Source, type StatusWord, type TenantStatus, UNKNOWN } from "./model";

// A tenant's one status word, from the most urgent rule that holds: what
// the fleet failed at comes before what the service says, so a tenant of a
// failed shard never reads as the inventory declares it.

type Facts = Omit<PageTenant, "status" | "attention">;

interface Rule {
  word: StatusWord;
  source: Source;
  /** The detail when the rule holds (an empty string for none), undefined when it does not. */
  holds: (tenant: Facts, shard: PageShard | undefined) => string | undefined;
}

const when = (condition: boolean, detail = "") => (condition ? detail : undefined);

/** The earliest day a waiting domain was created, `YYYY-MM-DD`, or nothing the state recorded. */
function waitingSince(tenant: Facts): string {
  const days = tenant.domains.flatMap((domain) => (domain.waiting?.since ? [domain.waiting.since.slice(0, 10)] : []));
  return days.length === 0 ? "" : `since ${days.sort()[0]}`;
}

function verifiedOf(tenant: Facts): string {
  const verified = tenant.domains.filter((domain) => domain.verified === true).length;
  return `${verified} of ${tenant.domains.length} verified`;
}

const RULES: Rule[] = [
  { word: "failed shard", source: "state", holds: (_, shard) => when(shard?.failed === true, shard?.failure) },
  {
    word: "interrupted shard",
    source: "state",
    holds: (_, shard) => when(shard?.interrupted !== undefined, shard?.interrupted),
  },
  { word: "drifted", source: "state", holds: (tenant) => when(tenant.drift.length > 0, tenant.drift.join("; ")) },
  { word: "not deployed", source: "state", holds: (tenant) => when(!tenant.deployed) },
  {
    word: "unknown",
    source: "service",
    holds: (tenant) =>
      when(
        tenant.domains.some((domain) => domain.verified === UNKNOWN),
        "a read of the service failed",
      ),
  },
  {
    word: "record not seen",
    source: "service",
    holds: (tenant) => when(tenant.domains.some((domain) => domain.published === true && domain.dmarc === "no-record")),
  },
  {
    word: "waiting for the customer's record",
    source: "service",
    holds: (tenant) =>
      when(
        tenant.domains.some((domain) => domain.waiting),
        [waitingSince(tenant), verifiedOf(tenant)].filter(Boolean).join(", "),
      ),
  },
  {
    word: "not verified",
    source: "service",
    holds: (tenant) => when(tenant.domains.some((domain) => domain.verified !== true)),
  },
];

/** The first rule's word that holds; verified when none does (the Verified column says how many: no detail). */
export function statusOf(tenant: Facts, shard: PageShard | undefined): TenantStatus {
  for (const rule of RULES) {
    const detail = rule.holds(tenant, shard);
    if (detail !== undefined) return { word: rule.word, source: rule.source, ...(detail ? { detail } : {}) };
  }
  return { word: "verified", source: "service" };
}
