import type * as api from "../api";
import { ReadBatcher } from "./batching/coalescing";
import { AuditLogReads } from "./families/auditLog";
import { DomainGroupCalls } from "./families/domainGroups";
import { DomainCalls } from "./families/domains";
import { OrganizationCalls } from "./families/organizations";
import {
  type PassRate,
  type ReportQuery,
  type ReportRange,
  ReportReads,
  type VolumeQuery,
  type VolumeRow,
} from "./families/reports";
import { SubscriptionCalls } from "./families/subscriptions";
import { UserCalls } from "./families/users";
import { WebhookCalls } from "./families/webhooks";
import type { Requester } from "./requester";

// One typed method per route (paths: ../shared/api/README.md, section 5).
// Reads answer undefined for a missing object and deletes answer false, so
// the resources can tell "gone" from "failed" without inspecting errors.
// The `read*` methods answer from list calls shared by every reader of this
// client (./batching/coalescing.ts), never older than this client's last
// write to that list; every state-changing call names the lists it makes
// stale. `get*` and `list*` send their own request each time.
//
// Each method is its family's (./families/), where its comment says why it
// reads or writes as it does; callers keep one object, whatever family a
// call belongs to, and one set of shared lists.

/** Build one with {@link createClient}, which shares connections, tokens, pacing and list reads. */
export class DmarcClient {
  private readonly reads = new ReadBatcher();
  private readonly organizations: OrganizationCalls;
  private readonly domainGroups: DomainGroupCalls;
  private readonly domains: DomainCalls;
  private readonly webhooks: WebhookCalls;
  private readonly auditLog: AuditLogReads;
  private readonly reports: ReportReads;
  private readonly subscriptions: SubscriptionCalls;
  private readonly users: UserCalls;

  /** @param batchWindowMs how long a domain create waits for others of its organisation; 0 sends each alone. */
  constructor(
    private readonly requester: Requester,
    batchWindowMs = 0,
  ) {
    this.organizations = new OrganizationCalls(requester, this.reads);
    this.domains = new DomainCalls(requester, this.reads, this.organizations, batchWindowMs);
    this.domainGroups = new DomainGroupCalls(requester, this.reads, this.organizations, this.domains);
    this.webhooks = new WebhookCalls(requester, this.reads);
    this.auditLog = new AuditLogReads(requester, this.organizations);
    this.reports = new ReportReads(requester, this.organizations);
    this.subscriptions = new SubscriptionCalls(requester, this.reads, this.organizations);
    this.users = new UserCalls(requester, this.organizations);
  }

  /**
   * Starts afresh: lists this client read before are not used again. For an
   * operation that runs in a process that lives longer than it (an import
   * through the Automation API), so its reads see the service as it is now.
   */
  forgetLists(): void {
    this.reads.forget();
  }

  /**
   * Tries per call, the first included, as configured. Callers that settle an
   * unanswered state-changing call themselves (look up, then send again) use
   * it as their bound, so raising maxAttempts buys patience everywhere.
   */
  get maxAttempts(): number {
    return this.requester.maxAttempts;
  }

  /**
   * How long a call keeps retrying, as configured: callers that wait for
   * another call of the same run to take effect wait as long at most.
   */
  get maxRetryElapsedMs(): number {
    return this.requester.maxRetryElapsedMs;
  }

  // Organisations (./families/organizations.ts)

  createOrganization(body: api.CreateOrganizationRequest): Promise<api.Organization> {
    return this.organizations.createOrganization(body);
  }
  readOrganization(id: string): Promise<api.Organization | undefined> {
    return this.organizations.readOrganization(id);
  }
  getOrganization(id: string): Promise<api.Organization | undefined> {
    return this.organizations.getOrganization(id);
  }
  listOrganizations(): Promise<api.Organization[]> {
    return this.organizations.listOrganizations();
  }
  updateOrganization(id: string, body: api.UpdateOrganizationRequest): Promise<api.Organization> {
    return this.organizations.updateOrganization(id, body);
  }
  deleteOrganization(id: string): Promise<boolean> {
    return this.organizations.deleteOrganization(id);
  }

  // Domain groups (./families/domainGroups.ts)

  createDomainGroup(body: api.CreateDomainGroupRequest): Promise<api.DomainGroup> {
    return this.domainGroups.createDomainGroup(body);
  }
  readDomainGroup(organizationId: string, id: string): Promise<api.DomainGroup | undefined> {
    return this.domainGroups.readDomainGroup(organizationId, id);
  }
  getDomainGroup(organizationId: string, id: string): Promise<api.DomainGroup | undefined> {
    return this.domainGroups.getDomainGroup(organizationId, id);
  }
  listDomainGroups(organizationId: string): Promise<api.DomainGroup[]> {
    return this.domainGroups.listDomainGroups(organizationId);
  }
  readDomainGroups(organizationId: string): Promise<api.DomainGroup[]> {
    return this.domainGroups.readDomainGroups(organizationId);
  }
  updateDomainGroup(organizationId: string, id: string, body: api.UpdateDomainGroupRequest): Promise<api.DomainGroup> {
    return this.domainGroups.updateDomainGroup(organizationId, id, body);
  }
  deleteDomainGroup(organizationId: string, id: string): Promise<boolean> {
    return this.domainGroups.deleteDomainGroup(organizationId, id);
  }

  // Domains (./families/domains.ts)

  createDomain(body: api.CreateDomainRequest, together?: number): Promise<api.Domain> {
    return this.domains.createDomain(body, together);
  }
  domainDeclared(organizationId: string, domain: string, creates: boolean): void {
    this.domains.domainDeclared(organizationId, domain, creates);
  }
  readDomain(organizationId: string, domain: string): Promise<api.Domain | undefined> {
    return this.domains.readDomain(organizationId, domain);
  }
  getDomain(organizationId: string, domain: string): Promise<api.Domain | undefined> {
    return this.domains.getDomain(organizationId, domain);
  }
  listDomains(organizationId: string): Promise<api.Domain[]> {
    return this.domains.listDomains(organizationId);
  }
  readDomains(organizationId: string): Promise<api.Domain[]> {
    return this.domains.readDomains(organizationId);
  }
  updateDomain(organizationId: string, domain: string, body: api.UpdateDomainRequest): Promise<api.Domain> {
    return this.domains.updateDomain(organizationId, domain, body);
  }
  deleteDomain(organizationId: string, domain: string): Promise<boolean> {
    return this.domains.deleteDomain(organizationId, domain);
  }
  getSetupRecord(organizationId: string, domain: string, type: api.SetupRecordType): Promise<api.SetupRecord> {
    return this.domains.getSetupRecord(organizationId, domain, type);
  }

  // Webhooks (./families/webhooks.ts)

  createWebhook(body: api.CreateWebhookRequest): Promise<api.WebhookWithSecret> {
    return this.webhooks.createWebhook(body);
  }
  readWebhook(id: string, ownerId: string): Promise<api.Webhook | undefined> {
    return this.webhooks.readWebhook(id, ownerId);
  }
  getWebhook(id: string): Promise<api.Webhook | undefined> {
    return this.webhooks.getWebhook(id);
  }
  listWebhooks(ownerId: string): Promise<api.Webhook[]> {
    return this.webhooks.listWebhooks(ownerId);
  }
  readWebhooks(ownerId: string): Promise<api.Webhook[]> {
    return this.webhooks.readWebhooks(ownerId);
  }
  updateWebhook(id: string, body: api.UpdateWebhookRequest): Promise<api.Webhook> {
    return this.webhooks.updateWebhook(id, body);
  }
  deleteWebhook(id: string): Promise<boolean> {
    return this.webhooks.deleteWebhook(id);
  }
  regenerateWebhookSecret(id: string): Promise<api.WebhookWithSecret> {
    return this.webhooks.regenerateWebhookSecret(id);
  }
  listDeliveries(id: string): Promise<api.Delivery[]> {
    return this.webhooks.listDeliveries(id);
  }

  // Audit log (./families/auditLog.ts)

  countAuditLogEntries(
    organizationId: string,
    categories: readonly api.AuditLogCategory[],
    since: Date,
  ): Promise<number> {
    return this.auditLog.countAuditLogEntries(organizationId, categories, since);
  }

  // Aggregate reports and the domain overview (./families/reports.ts)

  authPassRates(query: ReportQuery): Promise<PassRate[]> {
    return this.reports.authPassRates(query);
  }
  volumeHistory(query: VolumeQuery): Promise<VolumeRow[]> {
    return this.reports.volumeHistory(query);
  }
  domainsOverview(organizationId: string, range: ReportRange): Promise<api.DomainOverview[]> {
    return this.reports.domainsOverview(organizationId, range);
  }

  // Plans and subscriptions (./families/subscriptions.ts)

  listPlans(): Promise<api.Plan[]> {
    return this.subscriptions.listPlans();
  }
  assignSubscription(body: api.AssignSubscriptionRequest): Promise<api.Subscription> {
    return this.subscriptions.assignSubscription(body);
  }
  changeSubscriptionPrice(id: string, priceId: string): Promise<api.Subscription> {
    return this.subscriptions.changeSubscriptionPrice(id, priceId);
  }
  renewSubscription(id: string): Promise<api.Subscription> {
    return this.subscriptions.renewSubscription(id);
  }
  cancelSubscription(id: string): Promise<api.Subscription> {
    return this.subscriptions.cancelSubscription(id);
  }
  readSubscriptions(organizationId: string): Promise<api.Subscription[]> {
    return this.subscriptions.readSubscriptions(organizationId);
  }
  listSubscriptions(organizationId: string): Promise<api.Subscription[]> {
    return this.subscriptions.listSubscriptions(organizationId);
  }

  // Users and sign-in (./families/users.ts)

  inviteUser(body: api.InviteUserRequest): Promise<void> {
    return this.users.inviteUser(body);
  }
  getUser(organizationId: string, userId: string): Promise<api.User | undefined> {
    return this.users.getUser(organizationId, userId);
  }
  revokeOrganizationAccess(body: api.RevokeOrganizationAccessRequest): Promise<void> {
    return this.users.revokeOrganizationAccess(body);
  }
  createMagicLink(body: api.MagicLinkRequest): Promise<api.MagicLink> {
    return this.users.createMagicLink(body);
  }
}
