import {
  type CreateDomainGroupRequest,
  type Domain,
  DomainGroup,
  DomainGroupList,
  type UpdateDomainGroupRequest,
} from "../../api";
import type { ReadBatcher } from "../batching/coalescing";
import { isNotFound } from "../errors";
import type { Requester } from "../requester";
import { listPages, segment, withQuery } from "./common";
import type { DomainCalls } from "./domains";
import { domainsAndGroupsOf, groupsOf } from "./listScopes";
import type { OrganizationCalls } from "./organizations";

export class DomainGroupCalls {
  constructor(
    private readonly requester: Requester,
    private readonly reads: ReadBatcher,
    private readonly organizations: OrganizationCalls,
    private readonly domains: DomainCalls,
  ) {}

  createDomainGroup(body: CreateDomainGroupRequest): Promise<DomainGroup> {
    return this.reads.write([groupsOf(body.organizationId)], () =>
      this.requester.call({
        operation: "create domain group",
        method: "POST",
        path: "/v1/domain-groups",
        json: body,
        schema: DomainGroup,
        repeatable: false,
      }),
    );
  }

  /**
   * A group with domains is described by them: each domain of the
   * organisation's list names its group's id and name, so the list that
   * answers the domains' reads answers their groups' too. A group no domain
   * names is read from the organisation's list of groups. Both lists are
   * shared by every read of this client.
   */
  async readDomainGroup(organizationId: string, id: string): Promise<DomainGroup | undefined> {
    const members = await this.domains.readDomains(organizationId).then(
      (domains) => domains.filter((domain) => domain.domainGroupId === id),
      (error: unknown): Domain[] => {
        // Without the domain list (the organisation is gone), the group's own reads decide.
        if (isNotFound(error)) return [];
        throw error;
      },
    );
    const name = members[0]?.domainGroup;
    if (name) return { id, name, domains: members.map((domain) => domain.domain) };
    return this.reads.find(groupsOf(organizationId), id, this.groupList(organizationId), () =>
      this.getDomainGroup(organizationId, id),
    );
  }

  getDomainGroup(organizationId: string, id: string): Promise<DomainGroup | undefined> {
    return this.organizations.scopedRead(
      organizationId,
      this.requester.call({
        operation: "read domain group",
        method: "GET",
        path: withQuery(`/v1/domain-groups/${segment(id)}`, { organizationId }),
        schema: DomainGroup,
        repeatable: true,
      }),
    );
  }

  listDomainGroups(organizationId: string): Promise<DomainGroup[]> {
    return this.groupList(organizationId).fetch();
  }

  /** {@link listDomainGroups}, shared by every group read of the organisation on this client. */
  readDomainGroups(organizationId: string): Promise<DomainGroup[]> {
    return this.reads.list(groupsOf(organizationId), this.groupList(organizationId));
  }

  private groupList(organizationId: string) {
    const keyOf = (group: DomainGroup) => group.id;
    const query = { organizationId };
    return {
      fetch: () =>
        this.organizations.scoped(
          organizationId,
          listPages(
            this.requester,
            "list domain groups",
            "/v1/domain-groups",
            query,
            "pageSize",
            DomainGroupList,
            keyOf,
          ),
        ),
      keyOf,
    };
  }

  updateDomainGroup(organizationId: string, id: string, body: UpdateDomainGroupRequest): Promise<DomainGroup> {
    return this.reads.write(domainsAndGroupsOf(organizationId), () =>
      this.requester.call({
        operation: "update domain group",
        method: "PUT",
        // The description gives this route no organizationId query.
        path: `/v1/domain-groups/${segment(id)}`,
        json: body,
        schema: DomainGroup,
        repeatable: true,
      }),
    );
  }

  deleteDomainGroup(organizationId: string, id: string): Promise<boolean> {
    return this.reads.write(domainsAndGroupsOf(organizationId), () =>
      this.organizations.scopedDelete(
        organizationId,
        this.requester.call({
          operation: "delete domain group",
          method: "DELETE",
          path: withQuery(`/v1/domain-groups/${segment(id)}`, { organizationId }),
          repeatable: true,
        }),
      ),
    );
  }
}
