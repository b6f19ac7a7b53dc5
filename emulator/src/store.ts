import type {
  DomainPolicy,
  DomainType,
  EventName,
  Frequency,
  ReportType,
  Role,
  WebhookEvent,
} from "pulumi-dmarc-partner/api";
import type { AuditRecord } from "./auditActions";
import type { CatalogueFeatures } from "./partners";

// Every record carries the partner that owns it: a partner only ever sees its own.

export interface OrganizationRecord {
  id: string;
  partnerId: string;
  name: string;
  createdAt: string;
  updatedAt: string;
}

export interface DomainGroupRecord {
  id: string;
  partnerId: string;
  organizationId: string;
  name: string;
  createdAt: string;
  updatedAt: string;
}

interface VerificationState {
  /** Start of the window in which a published record is looked for. */
  startedAt: string;
  /** No more periodic checks: verified, or the window ended. */
  finished: boolean;
  /** Reason of the last failed event sent, so periodic checks report each failure once. */
  lastFailure: string | null;
}

export interface DomainRecord {
  partnerId: string;
  organizationId: string;
  domain: string;
  type: DomainType;
  groupId: string;
  policy: DomainPolicy;
  domainVerified: boolean;
  createdAt: string;
  updatedAt: string;
  verification: VerificationState;
}

export interface WebhookRecord {
  objectId: string;
  partnerId: string;
  name: string;
  ownerId: string;
  url: string;
  events: EventName[];
  active: boolean;
  secret: string;
  createdAt: string;
  updatedAt: string;
}

interface AttemptRecord {
  attempt: number;
  at: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

export interface DeliveryRecord {
  /** Sent as `webhook-id` on every attempt, so receivers can drop duplicates. */
  id: string;
  webhookObjectId: string;
  eventName: EventName;
  payload: WebhookEvent;
  attempts: number;
  maxAttempts: number;
  nextRetryAt: string | null;
  status: "pending" | "success" | "failed";
  statusCode: number | null;
  error: string | null;
  deliveredAt: string | null;
  createdAt: string;
  history: AttemptRecord[];
}

export interface SubscriptionRecord {
  id: string;
  itemId: string;
  partnerId: string;
  organizationId: string;
  planId: string;
  priceId: string;
  /** The plan's features when assigned: limits follow the subscription, not later catalogue edits. */
  features: CatalogueFeatures;
  /** The price's term, by which renew extends expireDate. */
  frequency: Frequency;
  billingPeriod: number;
  expireDate: string;
  cancelledAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface UserRecord {
  id: string;
  partnerId: string;
  email: string;
  /** Set once the user has signed in through a magic link. */
  emailVerified: boolean;
  /** organisation id -> role; a user left without any organisation is forgotten. */
  memberships: Record<string, Role>;
  createdAt: string;
}

export interface MagicLinkRecord {
  token: string;
  partnerId: string;
  organizationId: string;
  userId: string;
  redirectUri: string;
  expiresAt: string;
  consumedAt: string | null;
}

export interface TokenRecord {
  token: string;
  partnerId: string;
  expiresAt: string;
}

export interface ReportRecord {
  reportId: string;
  partnerId: string;
  organizationId: string;
  domain: string;
  reporter: string;
  begin: string;
  end: string;
  messageCount: number;
  receivedAt: string;
}

/** How a domain's mail looks in its aggregate reports from `fromDay` on (reports/senderProfiles.ts). */
export interface SenderSegment {
  /** The first report day it holds for, `YYYY-MM-DD`. */
  fromDay: string;
  messagesPerDay: number;
  /** Percent of messages passing SPF, 0–100. */
  spfPassRate: number;
  /** Percent of messages passing DKIM, 0–100. */
  dkimPassRate: number;
  /** Percent of messages per report type, summing to 100. */
  reportTypeShares: Record<ReportType, number>;
}

/** Profiles set through the control plane, per domain name; days before the first keep the default. */
export interface SenderProfileRecord {
  domain: string;
  segments: SenderSegment[];
}

/** One move of the report clock: from the instant `at` (machine time) on, report days run `days` further ahead. */
export interface ClockAdvance {
  at: string;
  days: number;
}

export interface ZoneRecord {
  name: string;
  type: "TXT" | "CNAME";
  values: string[];
  /** Seconds; records written through the control plane have none and are served with the zone's default. */
  ttl?: number;
}

export interface StateSnapshot {
  version: 1;
  organizations: OrganizationRecord[];
  domainGroups: DomainGroupRecord[];
  domains: DomainRecord[];
  webhooks: WebhookRecord[];
  deliveries: DeliveryRecord[];
  subscriptions: SubscriptionRecord[];
  users: UserRecord[];
  magicLinks: MagicLinkRecord[];
  tokens: TokenRecord[];
  reports: ReportRecord[];
  dnsRecords: ZoneRecord[];
  /** Absent from snapshots written before the emulator kept an audit log. */
  auditLog?: AuditRecord[];
  /** Absent from snapshots written before the emulator had report data. */
  senderProfiles?: SenderProfileRecord[];
  clockAdvances?: ClockAdvance[];
}

export function domainKey(organizationId: string, domain: string): string {
  return `${organizationId} ${domain}`;
}

/** The whole emulated service state, in memory. Callers report mutations with `changed()`. */
export class Store {
  readonly organizations = new Map<string, OrganizationRecord>();
  readonly domainGroups = new Map<string, DomainGroupRecord>();
  readonly domains = new Map<string, DomainRecord>();
  readonly webhooks = new Map<string, WebhookRecord>();
  readonly deliveries = new Map<string, DeliveryRecord>();
  readonly subscriptions = new Map<string, SubscriptionRecord>();
  readonly users = new Map<string, UserRecord>();
  readonly magicLinks = new Map<string, MagicLinkRecord>();
  readonly tokens = new Map<string, TokenRecord>();
  readonly reports = new Map<string, ReportRecord>();
  readonly dnsRecords = new Map<string, ZoneRecord>();
  readonly auditLog = new Map<string, AuditRecord>();
  readonly senderProfiles = new Map<string, SenderProfileRecord>();
  readonly clockAdvances: ClockAdvance[] = [];

  constructor(private readonly onChange: () => void) {}

  changed(): void {
    this.onChange();
  }

  domainsOf(organizationId: string): DomainRecord[] {
    return [...this.domains.values()].filter((domain) => domain.organizationId === organizationId);
  }

  subscriptionsOf(organizationId: string): SubscriptionRecord[] {
    return [...this.subscriptions.values()].filter((subscription) => subscription.organizationId === organizationId);
  }

  removeUserMembership(user: UserRecord, organizationId: string): void {
    delete user.memberships[organizationId];
    if (Object.keys(user.memberships).length === 0) this.users.delete(user.id);
  }

  removeWebhook(objectId: string): void {
    this.webhooks.delete(objectId);
    deleteWhere(this.deliveries, (delivery) => delivery.webhookObjectId === objectId);
  }

  /** Removes an organisation and everything that hangs off it, so nothing is left orphaned. */
  removeOrganization(organizationId: string): void {
    this.organizations.delete(organizationId);
    const belongs = (record: { organizationId: string }) => record.organizationId === organizationId;
    deleteWhere(this.domainGroups, belongs);
    deleteWhere(this.domains, belongs);
    deleteWhere(this.subscriptions, belongs);
    deleteWhere(this.magicLinks, belongs);
    deleteWhere(this.reports, belongs);
    deleteWhere(this.auditLog, belongs);
    for (const user of [...this.users.values()]) {
      if (user.memberships[organizationId] !== undefined) this.removeUserMembership(user, organizationId);
    }
    for (const webhook of [...this.webhooks.values()]) {
      if (webhook.ownerId === organizationId) this.removeWebhook(webhook.objectId);
    }
  }

  /** Forgets every object. Issued tokens survive: they are credentials, and clients holding one keep working. */
  reset(): void {
    for (const map of this.maps()) if (map !== this.tokens) map.clear();
    this.clockAdvances.length = 0;
  }

  snapshot(): StateSnapshot {
    return {
      version: 1,
      organizations: [...this.organizations.values()],
      domainGroups: [...this.domainGroups.values()],
      domains: [...this.domains.values()],
      webhooks: [...this.webhooks.values()],
      deliveries: [...this.deliveries.values()],
      subscriptions: [...this.subscriptions.values()],
      users: [...this.users.values()],
      magicLinks: [...this.magicLinks.values()],
      tokens: [...this.tokens.values()],
      reports: [...this.reports.values()],
      dnsRecords: [...this.dnsRecords.values()],
      auditLog: [...this.auditLog.values()],
      senderProfiles: [...this.senderProfiles.values()],
      clockAdvances: [...this.clockAdvances],
    };
  }

  restore(snapshot: StateSnapshot): void {
    for (const map of this.maps()) map.clear();
    for (const record of snapshot.organizations) this.organizations.set(record.id, record);
    for (const record of snapshot.domainGroups) this.domainGroups.set(record.id, record);
    for (const record of snapshot.domains) this.domains.set(domainKey(record.organizationId, record.domain), record);
    for (const record of snapshot.webhooks) this.webhooks.set(record.objectId, record);
    for (const record of snapshot.deliveries) this.deliveries.set(record.id, record);
    for (const record of snapshot.subscriptions) this.subscriptions.set(record.id, record);
    for (const record of snapshot.users) this.users.set(record.id, record);
    for (const record of snapshot.magicLinks) this.magicLinks.set(record.token, record);
    for (const record of snapshot.tokens) this.tokens.set(record.token, record);
    for (const record of snapshot.reports) this.reports.set(record.reportId, record);
    for (const record of snapshot.dnsRecords) this.dnsRecords.set(record.name, record);
    for (const record of snapshot.auditLog ?? []) this.auditLog.set(record.id, record);
    for (const record of snapshot.senderProfiles ?? []) this.senderProfiles.set(record.domain, record);
    this.clockAdvances.splice(0, this.clockAdvances.length, ...(snapshot.clockAdvances ?? []));
  }

  private maps(): Map<string, unknown>[] {
    return [
      this.organizations,
      this.domainGroups,
      this.domains,
      this.webhooks,
      this.deliveries,
      this.subscriptions,
      this.users,
      this.magicLinks,
      this.tokens,
      this.reports,
      this.dnsRecords,
      this.auditLog,
      this.senderProfiles,
    ];
  }
}

function deleteWhere<T>(map: Map<string, T>, predicate: (record: T) => boolean): void {
  for (const [key, record] of map) if (predicate(record)) map.delete(key);
}
