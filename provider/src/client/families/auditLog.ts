import { type AuditLogCategory, AuditLogPage } from "../../api";
import type { Requester } from "../requester";
import { withQuery } from "./common";
import type { OrganizationCalls } from "./organizations";

export class AuditLogReads {
  constructor(
    private readonly requester: Requester,
    private readonly organizations: OrganizationCalls,
  ) {}

  /**
   * How many audit-log entries of these categories the organisation has since
   * `since`: one request for a page of one entry. Categories go as one
   * comma-separated value, the way the description spells its list filters.
   */
  async countAuditLogEntries(
    organizationId: string,
    categories: readonly AuditLogCategory[],
    since: Date,
  ): Promise<number> {
    const query = {
      organizationId,
      actionCategories: categories.join(","),
      startDate: since.toISOString(),
      pageSize: 1,
    };
    const page = await this.organizations.scoped(
      organizationId,
      this.requester.call({
        operation: "read the audit log",
        method: "GET",
        path: withQuery("/v1/audit-log", query),
        schema: AuditLogPage,
        repeatable: true,
      }),
    );
    return page.totalCount ?? page.data.length;
  }
}
