import {
  CreateDomainGroupRequest,
  DomainGroup,
  DomainGroupList,
  PageQuery,
  UpdateDomainGroupRequest,
} from "pulumi-dmarc-partner/api";
import { z } from "zod";
import { domainGroupOf, organizationInScope } from "../access";
import { audit } from "../auditLog";
import { type Context, now, param } from "../context";
import { conflict } from "../errors";
import { newId } from "../ids";
import { paginateAs } from "../pagination";
import type { ApiRouter, PartnerCall } from "../router";
import type { DomainGroupRecord, Store } from "../store";
import { conform, parseInput } from "../wire";

const OrganizationQuery = z.object({ organizationId: z.string().min(1) });
const ListQuery = PageQuery.extend(OrganizationQuery.shape);
const UpdateQuery = z.object({ organizationId: z.string().min(1).optional() });

function domainsIn(store: Store, group: DomainGroupRecord): string[] {
  return store
    .domainsOf(group.organizationId)
    .filter((domain) => domain.groupId === group.id)
    .map((domain) => domain.domain);
}

function view(store: Store, group: DomainGroupRecord): DomainGroup {
  return conform(DomainGroup, { id: group.id, name: group.name, domains: domainsIn(store, group) });
}

function createGroup({ store, profile }: Context, { request, reply, partner }: PartnerCall): DomainGroup {
  const body = parseInput(CreateDomainGroupRequest, request.body, "body");
  organizationInScope(store, profile, partner, body.organizationId);
  const at = now();
  const group: DomainGroupRecord = {
    id: newId("dmngrp"),
    partnerId: partner.id,
    organizationId: body.organizationId,
    name: body.name,
    createdAt: at,
    updatedAt: at,
  };
  store.domainGroups.set(group.id, group);
  audit(store, group, "DOMAIN_GROUP_ADDED", { label: group.name, id: group.id });
  reply.code(201);
  return view(store, group);
}

/** A group is deleted only once it holds no domain. */
function deleteGroup(store: Store, { request, reply, partner }: PartnerCall): void {
  const query = parseInput(OrganizationQuery, request.query, "query");
  const group = domainGroupOf(store, partner, param(request, "groupId"), query.organizationId);
  const members = domainsIn(store, group);
  if (members.length > 0) {
    throw conflict(
      "DomainGroup",
      group.id,
      "group_not_empty",
      `The group still holds ${members.join(", ")}: delete or move those domains first.`,
    );
  }
  store.domainGroups.delete(group.id);
  audit(store, group, "DOMAIN_GROUP_REMOVED", { label: group.name, id: group.id });
  reply.code(204);
}

export function domainGroupRoutes(router: ApiRouter, ctx: Context): void {
  const { store, profile } = ctx;
  router.resource("POST", "/domain-groups", (call) => createGroup(ctx, call));

  router.resource("GET", "/domain-groups", ({ request, partner }) => {
    const query = parseInput(ListQuery, request.query, "query");
    organizationInScope(store, profile, partner, query.organizationId);
    const groups = [...store.domainGroups.values()].filter((group) => group.organizationId === query.organizationId);
    return conform(
      DomainGroupList,
      paginateAs(
        profile,
        "domainGroups",
        groups.map((group) => view(store, group)),
        query,
      ),
    );
  });

  router.resource("GET", "/domain-groups/:groupId", ({ request, partner }) => {
    const query = parseInput(OrganizationQuery, request.query, "query");
    return view(store, domainGroupOf(store, partner, param(request, "groupId"), query.organizationId));
  });

  router.resource("PUT", "/domain-groups/:groupId", ({ request, partner }) => {
    const query = parseInput(UpdateQuery, request.query, "query");
    const group = domainGroupOf(store, partner, param(request, "groupId"), query.organizationId);
    const body = parseInput(UpdateDomainGroupRequest, request.body, "body");
    if (body.name !== group.name) audit(store, group, "DOMAIN_GROUP_NAME_EDITED", { label: body.name, id: group.id });
    Object.assign(group, { name: body.name, updatedAt: now() });
    return view(store, group);
  });

  router.resource("DELETE", "/domain-groups/:groupId", (call) => deleteGroup(store, call));
}
