// The fleet page's data, as `report --json` prints it and the page embeds
// it: one structure, so the page's totals and the JSON can never disagree.

/** Raised when a field changes meaning or goes; added fields keep the version. */
export const FLEET_PAGE_FORMAT_VERSION = 1;

/** What could not be read is `unknown`: never shown as fine. */
export const UNKNOWN = "unknown";
type Unknown = typeof UNKNOWN;

/** The service's word on one of a domain's SPF, DKIM and DMARC records (the overview's). */
export type RecordCheck = "valid" | "warning" | "no-record" | Unknown;

/**
 * A domain's DKIM and SPF pass rates (percent) and message counts, one entry
 * per day of the page's `reads.days`, null for a day without reports: day by
 * day columns keep 1,000 tenants' 30 days small. `unread` lists the days
 * whose read failed.
 */
export interface PassRateSeries {
  dkim: (number | null)[];
  spf: (number | null)[];
  messages: (number | null)[];
  unread: string[];
}

/** Where a cell's word comes from: the service's reads, the fleet's state (its shards' checkpoints and tags), or the inventory (what is declared). */
export type Source = "service" | "state" | "inventory";

/** The record a customer publishes for a domain the fleet does not publish, and since when the fleet's state holds the domain. */
export interface Waiting {
  /** When the domain was created on the service, from the fleet's state. */
  since?: string;
  /** The setup record to send the customer, from the domain's outputs in the fleet's state. */
  record?: { host: string; type: string; value: string };
}

/** Where a domain's record is published: by the fleet to a server or through a module, or by nobody the fleet knows. */
export type Publishing =
  | { by: "server"; server: string; zone?: string }
  | { by: "module"; module: string }
  | { by: "none" };

export interface PageDomain {
  name: string;
  publishing: Publishing;
  /** The fleet publishes its record, and the tenant's last up went through; unknown while that up failed. */
  published: boolean | Unknown;
  verified: boolean | Unknown;
  /** The policy stage: the inventory's ramp's (`quarantine-25`), else the policy the service observes. */
  stage: string;
  /** Where the stage comes from: the inventory's policy ramp, or the service's observation. */
  stageFrom: "inventory" | "observed";
  /** Where the inventory's ramp ends (`reject`), when the domain has one. */
  target?: string;
  /** The policy the service observes in the domain's DNS (`none`, `quarantine`, `reject`, `missing`). */
  observed: string;
  /** The service holds no such domain in the tenant's organisation (or the tenant has none yet). */
  onService: boolean | Unknown;
  spf: RecordCheck;
  dkim: RecordCheck;
  dmarc: RecordCheck;
  passRates: PassRateSeries;
  /** Set when the customer publishes the record (`dns: none`) and the service has not verified it yet. */
  waiting?: Waiting;
}

/** Why a tenant needs someone to look: each in words. */
export type AttentionReason = "drifted" | "shard failed" | "shard interrupted" | "record not seen";

/** A tenant's status, most urgent first: the row's one word a partner acts on. */
export type StatusWord =
  | "failed shard"
  | "interrupted shard"
  | "drifted"
  | "not deployed"
  | "unknown"
  | "record not seen"
  | "waiting for the customer's record"
  | "not verified"
  | "verified";

export interface TenantStatus {
  word: StatusWord;
  source: Source;
  /** The failed shard's error, the drift found, since when a record is awaited. */
  detail?: string;
}

export interface PageTenant {
  key: string;
  name: string;
  /** The shard that holds it, or that it is assigned to. */
  shard?: string;
  organizationId?: string;
  plan: string;
  /** As the inventory declares it. */
  subscription: string;
  /** Whether the fleet's state holds the tenant's subscription: what the service was last seen to have. */
  subscriptionHeld: boolean;
  /** The row's status word, with its source. */
  status: TenantStatus;
  /** Not yet in any shard's state. */
  deployed: boolean;
  attention: AttentionReason[];
  /** What drift found, one line per object: `differs Domain acme.example`. */
  drift: string[];
  domains: PageDomain[];
}

export interface PageShard {
  name: string;
  tenants: number;
  /** Its last up failed (or was cut short) and no up has gone through since. */
  failed: boolean;
  /** Why, as the failed run said it. */
  failure?: string;
  interrupted?: string;
  drift?: string;
}

export interface PageTotals {
  tenants: number;
  domains: number;
  verified: number;
  published: number;
  drifted: number;
  failedShards: number;
  needsAttention: number;
  /** Tenants waiting for a customer to publish a domain's record. */
  waiting: number;
  /**
   * Domains with a cell unknown: a read of the service failed, a failed
   * shard left it unsure whether its record went out, or a day's pass rates
   * could not be read.
   */
  unknown: number;
  /** Domains per policy stage (`none`, `quarantine`, ..., `unknown`). */
  stages: Record<string, number>;
}

/** The reads the page cost, and which failed. */
export interface PageReads {
  requests: number;
  failures: string[];
  days: string[];
}

/** The fleet's domains per policy stage as one run of `report` counted them. */
export interface StageRun {
  at: string;
  stages: Record<string, number>;
}

export interface FleetPage {
  formatVersion: typeof FLEET_PAGE_FORMAT_VERSION;
  fleet: string;
  generatedAt: string;
  /** The kept reports the page read, with when each ran: `{ drift: "2026-11-25T19:00:00.000Z" }`. */
  lastRuns: Record<string, string>;
  totals: PageTotals;
  shards: PageShard[];
  tenants: PageTenant[];
  reads: PageReads;
  /** The policy stages of earlier runs kept beside the fleet's state, and this run's, oldest first. */
  trend: StageRun[];
}
