import {
  CreateDomainRequest,
  Domain,
  DomainList,
  DomainName,
  PageQuery,
  SetupRecord,
  SetupRecordQuery,
  UpdateDomainRequest,
} from "pulumi-dmarc-partner/api";
import { z } from "zod";
import { domainGroupOf, domainOf, organizationInScope } from "../access";
import { type Context, now } from "../context";
import { setupRecord } from "../dns/dmarc";
import { conflict, invalid, notFound } from "../errors";
import { checkRoomForDomain } from "../limits";
import { paginateAs } from "../pagination";
import type { Partner } from "../partners";
import type { ApiRouter, PartnerCall } from "../router";
import { type DomainRecord, domainKey, type Store } from "../store";
import { conform, parseInput } from "../wire";

const OrganizationQuery = z.object({ organizationId: z.string().min(1) });
const ListQuery = PageQuery.extend(OrganizationQuery.shape);
const UpdateQuery = z.object({ organizationId: z.string().min(1).optional() });
const DomainParams = z.object({ domain: DomainName });

function view(store: Store, record: DomainRecord): Domain {
  return conform(Domain, {
    domain: record.domain,
    type: record.type,
    policy: record.policy,
    domainVerified: record.domainVerified,
    domainGroup: store.domainGroups.get(record.groupId)?.name ?? null,
    domainGroupId: record.groupId,
  });
}

function domainParam(call: PartnerCall): string {
  return parseInput(DomainParams, call.request.params, "params").domain;
}

/** PATCH names no organisation; the domain is found among the partner's, and must be unambiguous. */
function domainForUpdate(store: Store, partner: Partner, domain: string, organizationId?: string): DomainRecord {
  if (organizationId !== undefined) return domainOf(store, partner, organizationId, domain);
  const matches = [...store.domains.values()].filter(
    (record) => record.partnerId === partner.id && record.domain === domain,
  );
  if (matches.length > 1) {
    throw invalid([
      { field: "organizationId", message: "is required: the domain exists in more than one organisation" },
    ]);
  }
  const [match] = matches;
  if (!match) throw notFound("Domain", domain);
  return match;
}

export function domainRoutes(router: ApiRouter, { store, dispatcher, profile }: Context): void {
  const inScope = (partner: Partner, organizationId: string) =>
    organizationInScope(store, profile, partner, organizationId);
  router.resource("POST", "/domains", ({ request, reply, partner }) => {
    const body = parseInput(CreateDomainRequest, request.body, "body");
    inScope(partner, body.organizationId);
    domainGroupOf(store, partner, body.groupId, body.organizationId);
    const key = domainKey(body.organizationId, body.domain);
    if (store.domains.has(key)) {
      throw conflict("Domain", body.domain, "already_exists", `${body.domain} is already in this organisation.`);
    }
    checkRoomForDomain(store, partner, body.organizationId);
    const at = now();
    const record: DomainRecord = {
      partnerId: partner.id,
      organizationId: body.organizationId,
      domain: body.domain,
      type: body.type,
      groupId: body.groupId,
      policy: "missing",
      domainVerified: false,
      createdAt: at,
      updatedAt: at,
      verification: { startedAt: at, finished: false, lastFailure: null },
    };
    store.domains.set(key, record);
    dispatcher.emit(partner.id, record.organizationId, {
      eventName: "domain.created",
      data: {
        domain: record.domain,
        organizationId: record.organizationId,
        type: record.type,
        groupId: record.groupId,
      },
    });
    reply.code(201);
    return view(store, record);
  });

  router.resource("GET", "/domains", ({ request, partner }) => {
    const query = parseInput(ListQuery, request.query, "query");
    inScope(partner, query.organizationId);
    const records = store.domainsOf(query.organizationId).map((record) => view(store, record));
    return conform(DomainList, paginateAs(profile, "domains", records, query));
  });

  router.resource("GET", "/domains/:domain", (call) => {
    const domain = domainParam(call);
    const query = parseInput(OrganizationQuery, call.request.query, "query");
    inScope(call.partner, query.organizationId);
    return view(store, domainOf(store, call.partner, query.organizationId, domain));
  });

  router.resource("PATCH", "/domains/:domain", (call) => {
    const domain = domainParam(call);
    const query = parseInput(UpdateQuery, call.request.query, "query");
    const record = domainForUpdate(store, call.partner, domain, query.organizationId);
    const body = parseInput(UpdateDomainRequest, call.request.body, "body");
    if (body.groupId !== undefined) domainGroupOf(store, call.partner, body.groupId, record.organizationId);
    Object.assign(record, {
      type: body.type ?? record.type,
      groupId: body.groupId ?? record.groupId,
      updatedAt: now(),
    });
    return view(store, record);
  });

  router.resource("DELETE", "/domains/:domain", (call) => {
    const domain = domainParam(call);
    const query = parseInput(OrganizationQuery, call.request.query, "query");
    inScope(call.partner, query.organizationId);
    const record = domainOf(store, call.partner, query.organizationId, domain);
    store.domains.delete(domainKey(record.organizationId, record.domain));
    call.reply.code(204);
  });

  router.resource("GET", "/domains/:domain/setup", (call) => {
    const domain = domainParam(call);
    const query = parseInput(SetupRecordQuery, call.request.query, "query");
    inScope(call.partner, query.organizationId);
    const record = domainOf(store, call.partner, query.organizationId, domain);
    return conform(SetupRecord, setupRecord(record.organizationId, record.domain, query.type));
  });
}
