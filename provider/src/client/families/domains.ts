import {
  type CreateDomainRequest,
  CreatedDomains,
  Domain,
  DomainList,
  SetupRecord,
  type SetupRecordType,
  type UpdateDomainRequest,
} from "../../api";
import type { ReadBatcher } from "../batching/coalescing";
import { type GatheredCall, Gatherer } from "../batching/gathering";
import { OutcomeUnknownError } from "../errors";
import type { Requester } from "../requester";
import { listPages, segment, withQuery } from "./common";
import { domainsAndGroupsOf, domainsOf } from "./listScopes";
import type { OrganizationCalls } from "./organizations";

export class DomainCalls {
  private readonly gatherer: Gatherer;

  /** @param batchWindowMs how long a domain create waits for others of its organisation; 0 sends each alone. */
  constructor(
    private readonly requester: Requester,
    private readonly reads: ReadBatcher,
    private readonly organizations: OrganizationCalls,
    batchWindowMs: number,
  ) {
    this.gatherer = new Gatherer(batchWindowMs);
  }

  /**
   * Creates of one organisation's domains go out as one
   * `POST /v1/domains/batch` (../batching/gathering.ts); one alone is a plain create.
   * `together`: how many domains of the organisation the caller declares
   * together, this one included; the create then waits until each is heard
   * of (a create, or {@link domainDeclared}) rather than for a window.
   */
  createDomain(body: CreateDomainRequest, together?: number): Promise<Domain> {
    return this.reads.write(domainsAndGroupsOf(body.organizationId), () =>
      this.gatherer.submit(body.organizationId, body, this.domainCreates, together),
    );
  }

  /** A domain of the organisation is declared; `creates`: its create is coming (otherwise it exists, or is adopted). */
  domainDeclared(organizationId: string, domain: string, creates: boolean): void {
    this.gatherer.hear(organizationId, domain, creates);
  }

  private readonly domainCreates: GatheredCall<CreateDomainRequest, Domain> = {
    single: (body) =>
      this.requester.call({
        operation: "create domain",
        method: "POST",
        path: "/v1/domains",
        json: body,
        schema: Domain,
        repeatable: false,
      }),
    batch: (bodies) =>
      this.requester.call({
        operation: "create domains",
        method: "POST",
        path: "/v1/domains/batch",
        json: {
          organizationId: bodies[0]?.organizationId ?? "",
          domains: bodies.map(({ domain, type, groupId }) => ({ domainName: domain, type, groupId })),
        },
        schema: CreatedDomains,
        repeatable: false,
      }),
    keyOfItem: (body) => body.domain,
    keyOfResult: (domain) => domain.domain,
    missing: (body) =>
      new OutcomeUnknownError(
        { operation: "create domain", method: "POST", path: "/v1/domains/batch" },
        `the batch's answer does not list ${body.domain}`,
        undefined,
      ),
  };

  /** From the organisation's list of domains, shared by every domain read of this client. */
  readDomain(organizationId: string, domain: string): Promise<Domain | undefined> {
    return this.reads.find(domainsOf(organizationId), domain, this.domainList(organizationId), () =>
      this.getDomain(organizationId, domain),
    );
  }

  getDomain(organizationId: string, domain: string): Promise<Domain | undefined> {
    return this.organizations.scopedRead(
      organizationId,
      this.requester.call({
        operation: "read domain",
        method: "GET",
        path: withQuery(`/v1/domains/${segment(domain)}`, { organizationId }),
        schema: Domain,
        repeatable: true,
      }),
    );
  }

  listDomains(organizationId: string): Promise<Domain[]> {
    return this.domainList(organizationId).fetch();
  }

  /** {@link listDomains}, shared by every domain and group read of the organisation on this client. */
  readDomains(organizationId: string): Promise<Domain[]> {
    return this.reads.list(domainsOf(organizationId), this.domainList(organizationId));
  }

  private domainList(organizationId: string) {
    const keyOf = (item: Domain) => item.domain;
    const query = { organizationId };
    return {
      fetch: () =>
        this.organizations.scoped(
          organizationId,
          listPages(this.requester, "list domains", "/v1/domains", query, "pageSize", DomainList, keyOf),
        ),
      keyOf,
    };
  }

  updateDomain(organizationId: string, domain: string, body: UpdateDomainRequest): Promise<Domain> {
    return this.reads.write(domainsAndGroupsOf(organizationId), () =>
      this.requester.call({
        operation: "update domain",
        method: "PATCH",
        // The description gives this route no organizationId query: the domain name alone identifies it.
        path: `/v1/domains/${segment(domain)}`,
        json: body,
        schema: Domain,
        repeatable: true,
      }),
    );
  }

  deleteDomain(organizationId: string, domain: string): Promise<boolean> {
    return this.reads.write(domainsAndGroupsOf(organizationId), () =>
      this.organizations.scopedDelete(
        organizationId,
        this.requester.call({
          operation: "delete domain",
          method: "DELETE",
          path: withQuery(`/v1/domains/${segment(domain)}`, { organizationId }),
          repeatable: true,
        }),
      ),
    );
  }

  getSetupRecord(organizationId: string, domain: string, type: SetupRecordType): Promise<SetupRecord> {
    return this.requester.call({
      operation: "read DNS setup record",
      method: "GET",
      path: withQuery(`/v1/domains/${segment(domain)}/setup`, { type, organizationId }),
      schema: SetupRecord,
      repeatable: true,
    });
  }
}
