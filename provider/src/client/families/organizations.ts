import {
  type CreateOrganizationRequest,
  Organization,
  OrganizationList,
  type UpdateOrganizationRequest,
} from "../../api";
import type { ReadBatcher } from "../batching/coalescing";
import { type DmarcApiError, OrganizationGoneError, refusesOrganization } from "../errors";
import type { Requester } from "../requester";
import { deleted, listPages, segment, unlessNotFound, withQuery } from "./common";
import { domainsAndGroupsOf, PARTNER, subscriptionsOf, webhooksOf } from "./listScopes";
import { PAGE_SIZE } from "./pagination";

// The partner's organisations, and the question every family's call scoped by
// an organisation asks when refused: is the organisation gone?

export class OrganizationCalls {
  constructor(
    private readonly requester: Requester,
    private readonly reads: ReadBatcher,
  ) {}

  createOrganization(body: CreateOrganizationRequest): Promise<Organization> {
    return this.reads.write([PARTNER], () =>
      this.requester.call({
        operation: "create organization",
        method: "POST",
        path: "/v1/organizations",
        json: body,
        schema: Organization,
        repeatable: false,
      }),
    );
  }

  /**
   * From the first page of the partner's organisations, shared by every
   * organisation read of this client; one not on it is read by its own GET.
   * A partner with up to a page of customers pays one request for all of
   * them, and a large partner's small stack never pays for the whole list.
   */
  readOrganization(id: string): Promise<Organization | undefined> {
    const keyOf = (org: Organization) => org.id;
    const firstPage = {
      fetch: async () =>
        (
          await this.requester.call({
            operation: "list organizations",
            method: "GET",
            path: withQuery("/v1/organizations", { page: 1, limit: PAGE_SIZE }),
            schema: OrganizationList,
            repeatable: true,
          })
        ).data,
      keyOf,
    };
    return this.reads.find(PARTNER, id, firstPage, () => this.getOrganization(id));
  }

  getOrganization(id: string): Promise<Organization | undefined> {
    return unlessNotFound(
      this.requester.call({
        operation: "read organization",
        method: "GET",
        path: `/v1/organizations/${segment(id)}`,
        schema: Organization,
        repeatable: true,
      }),
    );
  }

  listOrganizations(): Promise<Organization[]> {
    return listPages(
      this.requester,
      "list organizations",
      "/v1/organizations",
      {},
      "limit",
      OrganizationList,
      (org) => org.id,
    );
  }

  updateOrganization(id: string, body: UpdateOrganizationRequest): Promise<Organization> {
    return this.reads.write([PARTNER], () =>
      this.requester.call({
        operation: "update organization",
        method: "PATCH",
        path: `/v1/organizations/${segment(id)}`,
        json: body,
        schema: Organization,
        repeatable: true,
      }),
    );
  }

  deleteOrganization(id: string): Promise<boolean> {
    const everythingOf = [PARTNER, ...domainsAndGroupsOf(id), webhooksOf(id), subscriptionsOf(id)];
    return this.reads.write(everythingOf, () =>
      deleted(
        this.requester.call({
          operation: "delete organization",
          method: "DELETE",
          path: `/v1/organizations/${segment(id)}`,
          repeatable: true,
        }),
      ),
    );
  }

  /**
   * A call scoped by an organisation id. The description answers 403 or 422
   * on several routes for an organisation that is not (or no longer) the
   * partner's; the organisation's own read tells "gone" (404) from
   * "forbidden", and a gone organisation's call fails as not found.
   */
  async scoped<T>(organizationId: string, pending: Promise<T>): Promise<T> {
    try {
      return await pending;
    } catch (error) {
      if (!refusesOrganization(error) || (await this.getOrganization(organizationId)) !== undefined) throw error;
      throw new OrganizationGoneError(organizationId, error as DmarcApiError);
    }
  }

  /** {@link scoped}, answering undefined for a missing object or organisation. */
  scopedRead<T>(organizationId: string, pending: Promise<T>): Promise<T | undefined> {
    return unlessNotFound(this.scoped(organizationId, pending));
  }

  /** {@link scoped}, answering false for a missing object or organisation. */
  scopedDelete(organizationId: string, pending: Promise<void>): Promise<boolean> {
    return deleted(this.scoped(organizationId, pending));
  }
}
