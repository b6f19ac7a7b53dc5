import {
  CreateOrganizationRequest,
  Organization,
  OrganizationList,
  PageQuery,
  UpdateOrganizationRequest,
} from "pulumi-dmarc-partner/api";
import { z } from "zod";
import { organizationOf } from "../access";
import { type Context, now, param } from "../context";
import { conflict } from "../errors";
import { newId } from "../ids";
import { paginate } from "../pagination";
import type { ApiRouter } from "../router";
import type { OrganizationRecord } from "../store";
import { conform, parseInput } from "../wire";

const ListQuery = PageQuery.extend({ order: z.enum(["asc", "desc"]).optional() });

function view(record: OrganizationRecord): Organization {
  return conform(Organization, {
    id: record.id,
    name: record.name,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  });
}

export function organizationRoutes(router: ApiRouter, { store }: Context): void {
  router.resource("POST", "/organizations", ({ request, reply, partner }) => {
    const body = parseInput(CreateOrganizationRequest, request.body, "body");
    const at = now();
    const record: OrganizationRecord = {
      id: newId("org"),
      partnerId: partner.id,
      name: body.name,
      createdAt: at,
      updatedAt: at,
    };
    store.organizations.set(record.id, record);
    reply.code(201);
    return view(record);
  });

  router.resource("GET", "/organizations", ({ request, partner }) => {
    const query = parseInput(ListQuery, request.query, "query");
    const mine = [...store.organizations.values()].filter((record) => record.partnerId === partner.id);
    if (query.order === "desc") mine.reverse();
    const page = paginate(mine.map(view), query);
    return conform(OrganizationList, page);
  });

  router.resource("GET", "/organizations/:organizationId", ({ request, partner }) =>
    view(organizationOf(store, partner, param(request, "organizationId"))),
  );

  router.resource("PATCH", "/organizations/:organizationId", ({ request, partner }) => {
    const record = organizationOf(store, partner, param(request, "organizationId"));
    const body = parseInput(UpdateOrganizationRequest, request.body, "body");
    Object.assign(record, { name: body.name, updatedAt: now() });
    return view(record);
  });

  router.resource("DELETE", "/organizations/:organizationId", ({ request, reply, partner }) => {
    const record = organizationOf(store, partner, param(request, "organizationId"));
    const active = store.subscriptionsOf(record.id).find((subscription) => subscription.cancelledAt === null);
    if (active) {
      throw conflict(
        "Organization",
        record.id,
        "active_subscription",
        `Subscription ${active.id} is still active: cancel it before deleting the organisation.`,
      );
    }
    store.removeOrganization(record.id);
    reply.code(204);
  });
}
