import {
  CreateDomainRequest,
  CreateDomainsBatchRequest,
  CreatedDomains,
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
import { audit } from "../auditLog";
import { type Context, now } from "../context";
import type { Dispatcher } from "../delivery";
import { setupRecord } from "../dns/dmarc";
import { conflict, invalid, notFound } from "../errors";
import { checkRoomForDomains } from "../limits";
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

interface NewDomain {
  domain: string;
  type: DomainRecord["type"];
  groupId: string;
}

/** Checks every domain, then adds them all and announces each: one refused adds none. */
function addDomains(
  store: Store,
  dispatcher: Dispatcher,
  partner: Partner,
  organizationId: string,
  wanted: NewDomain[],
): DomainRecord[] {
  const names = new Set<string>();
  for (const { domain, groupId } of wanted) {
    domainGroupOf(store, partner, groupId, organizationId);
    if (store.domains.has(domainKey(organizationId, domain)) || names.has(domain)) {
      throw conflict("Domain", domain, "already_exists", `${domain} is already in this organisation.`);
    }
    names.add(domain);
  }
  checkRoomForDomains(store, partner, organizationId, wanted.length);
  const at = now();
  return wanted.map(({ domain, type, groupId }) => {
    const record: DomainRecord = {
      partnerId: partner.id,
      organizationId,
      domain,
      type,
      groupId,
      policy: "missing",
      domainVerified: false,
      createdAt: at,
      updatedAt: at,
      verification: { startedAt: at, finished: false, lastFailure: null },
    };
    store.domains.set(domainKey(organizationId, domain), record);
    audit(store, record, "DOMAIN_ADDED", { label: domain, id: domain });
    dispatcher.emit(partner.id, organizationId, {
      eventName: "domain.created",
      data: { domain, organizationId, type, groupId },
    });
    return record;
  });
}

// All or nothing: every domain is checked before any is added (the description's 409 names one that exists).
function createDomains(
  { store, dispatcher, profile }: Context,
  { request, reply, partner }: PartnerCall,
): z.input<typeof CreatedDomains> {
  const body = parseInput(CreateDomainsBatchRequest, request.body, "body");
  organizationInScope(store, profile, partner, body.organizationId);
  const wanted = body.domains.map(({ domainName, type, groupId }) => ({ domain: domainName, type, groupId }));
  const records = addDomains(store, dispatcher, partner, body.organizationId, wanted);
  reply.code(201);
  return conform(
    CreatedDomains,
    records.map((record) => view(store, record)),
  );
}

function updateDomain(store: Store, call: PartnerCall): Domain {
  const domain = domainParam(call);
  const query = parseInput(UpdateQuery, call.request.query, "query");
  const record = domainForUpdate(store, call.partner, domain, query.organizationId);
  const body = parseInput(UpdateDomainRequest, call.request.body, "body");
  if (body.groupId !== undefined) domainGroupOf(store, call.partner, body.groupId, record.organizationId);
  if (body.groupId !== undefined && body.groupId !== record.groupId) {
    audit(store, record, "DOMAIN_MOVED_TO_GROUP", { label: domain, id: domain });
  }
  Object.assign(record, {
    type: body.type ?? record.type,
    groupId: body.groupId ?? record.groupId,
    updatedAt: now(),
  });
  return view(store, record);
}

export function domainRoutes(router: ApiRouter, ctx: Context): void {
  const { store, dispatcher, profile } = ctx;
  const inScope = (partner: Partner, organizationId: string) =>
    organizationInScope(store, profile, partner, organizationId);
  router.resource("POST", "/domains", ({ request, reply, partner }) => {
    const body = parseInput(CreateDomainRequest, request.body, "body");
    inScope(partner, body.organizationId);
    const [record] = addDomains(store, dispatcher, partner, body.organizationId, [body]);
    reply.code(201);
    return record && view(store, record);
  });

  router.resource("POST", "/domains/batch", (call) => createDomains(ctx, call));

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

  router.resource("PATCH", "/domains/:domain", (call) => updateDomain(store, call));

  router.resource("DELETE", "/domains/:domain", (call) => {
    const domain = domainParam(call);
    const query = parseInput(OrganizationQuery, call.request.query, "query");
    inScope(call.partner, query.organizationId);
    const record = domainOf(store, call.partner, query.organizationId, domain);
    store.domains.delete(domainKey(record.organizationId, record.domain));
    audit(store, record, "DOMAIN_REMOVED", { label: domain, id: domain });
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
