import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { type Context, now, param } from "../context";
import { normalizeName } from "../dns/zone";
import { conflict, invalid, notFound } from "../errors";
import { FaultSpec } from "../faults";
import { newId } from "../ids";
import { domainKey, type ReportRecord } from "../store";
import { parseInput } from "../wire";
import { reportDataRoutes } from "./reports";

const DNS_LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
const DnsName = z
  .string()
  .transform(normalizeName)
  .refine((name) => name.length <= 253 && name.split(".").every((label) => DNS_LABEL.test(label)), {
    message: "must be a DNS name such as _dmarc.example.com",
  });

const ZoneRecordInput = z.discriminatedUnion("type", [
  z.object({ name: DnsName, type: z.literal("TXT"), values: z.array(z.string().max(4096)).min(1).max(20) }),
  z.object({ name: DnsName, type: z.literal("CNAME"), values: z.tuple([DnsName]) }),
]);

const NameQuery = z.object({ name: DnsName });

const ReportInput = z.object({
  organizationId: z.string().min(1),
  domain: z.string().min(1),
  reporter: z.string().min(1).default("google.com"),
  messageCount: z.number().int().nonnegative().default(1),
});

const VerifyInput = z.object({ organizationId: z.string().min(1) });

const DAY_MS = 86_400_000;

export interface ControlPlaneOptions {
  /** Every "METHOD /v1/..." pattern of the API, which faults may name. */
  apiRoutes: ReadonlySet<string>;
}

/** Faults to inject on one of the API's routes, or on all of them ("*"). */
function faultRoutes(app: FastifyInstance, { faults }: Context, apiRoutes: ReadonlySet<string>): void {
  app.post("/_emulator/faults", async (request, reply) => {
    const spec = parseInput(FaultSpec, request.body, "body");
    if (spec.route !== "*" && !apiRoutes.has(spec.route)) {
      throw invalid([{ field: "route", message: `must be "*" or one of: ${[...apiRoutes].sort().join(", ")}` }]);
    }
    return reply.code(201).send({ id: faults.add(spec) });
  });

  app.get("/_emulator/faults", async () => faults.list());

  app.delete("/_emulator/faults", async (_request, reply) => {
    faults.clear();
    return reply.code(204).send();
  });

  app.delete("/_emulator/faults/:faultId", async (request, reply) => {
    const id = param(request, "faultId");
    if (!faults.remove(id)) throw notFound("Fault", id);
    return reply.code(204).send();
  });
}

/** The simulated DNS zone's records, when the emulator serves one. */
function dnsRoutes(app: FastifyInstance, { zone }: Context): void {
  const simulatedZone = () => {
    if (!zone) {
      throw conflict(
        "DnsZone",
        "simulated",
        "simulated_zone_disabled",
        "The emulator resolves through a real DNS server (dns.resolver); publish records there.",
      );
    }
    return zone;
  };

  app.get("/_emulator/dns/records", async () => simulatedZone().list());

  app.put("/_emulator/dns/records", async (request, reply) => {
    const record = parseInput(ZoneRecordInput, request.body, "body");
    simulatedZone().put(record);
    return reply.code(204).send();
  });

  app.delete("/_emulator/dns/records", async (request, reply) => {
    const { name } = parseInput(NameQuery, request.query, "query");
    simulatedZone().remove(name);
    return reply.code(204).send();
  });
}

/** Aggregate reports and verification on demand, which otherwise wait on the service's schedule. */
function reportRoutes(app: FastifyInstance, { store, dispatcher, verifier }: Context): void {
  app.post("/_emulator/reports", async (request, reply) => {
    const input = parseInput(ReportInput, request.body, "body");
    const domain = store.domains.get(domainKey(input.organizationId, input.domain));
    if (!domain) throw notFound("Domain", input.domain);
    // An aggregate report covers the previous UTC day.
    const end = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    const report: ReportRecord = {
      reportId: newId("rpt"),
      partnerId: domain.partnerId,
      organizationId: domain.organizationId,
      domain: domain.domain,
      reporter: input.reporter,
      begin: new Date(end - DAY_MS).toISOString(),
      end: new Date(end - 1000).toISOString(),
      messageCount: input.messageCount,
      receivedAt: now(),
    };
    store.reports.set(report.reportId, report);
    const { partnerId, receivedAt, ...data } = report;
    dispatcher.emit(partnerId, report.organizationId, { eventName: "report.received", data });
    return reply.code(201).send(report);
  });

  app.post("/_emulator/domains/:domain/verify", async (request) => {
    const { organizationId } = parseInput(VerifyInput, request.body, "body");
    const domain = store.domains.get(domainKey(organizationId, param(request, "domain")));
    if (!domain) throw notFound("Domain", param(request, "domain"));
    return verifier.verifyNow(domain);
  });
}

/** Test and demo levers under /_emulator/: never authenticated, never counted, never faulted. */
export function controlRoutes(app: FastifyInstance, ctx: Context, { apiRoutes }: ControlPlaneOptions): void {
  const { store, faults, stats, dispatcher, tokens } = ctx;

  app.post("/_emulator/reset", async (_request, reply) => {
    dispatcher.cancelAll();
    store.reset();
    faults.clear();
    stats.reset();
    return reply.code(204).send();
  });

  faultRoutes(app, ctx, apiRoutes);

  app.get("/_emulator/stats", async () => stats.snapshot());

  app.post("/_emulator/stats/window", async () => stats.openWindow());

  dnsRoutes(app, ctx);

  reportRoutes(app, ctx);

  reportDataRoutes(app, ctx);

  // The emulator's clock is the machine's: a term cannot run out within a
  // test, so this ends one now (a partner's lapsed customer).
  app.post("/_emulator/subscriptions/:subscriptionId/expire", async (request) => {
    const record = store.subscriptions.get(param(request, "subscriptionId"));
    if (!record) throw notFound("Subscription", param(request, "subscriptionId"));
    Object.assign(record, { expireDate: now(), updatedAt: now() });
    return record;
  });

  // An invited user signs in and verifies their address, which nothing in the API does.
  app.post("/_emulator/users/:userId/accept", async (request) => {
    const record = store.users.get(param(request, "userId"));
    if (!record) throw notFound("User", param(request, "userId"));
    record.emailVerified = true;
    return { id: record.id, email: record.email, emailVerified: record.emailVerified };
  });

  app.post("/_emulator/tokens/expire", async (_request, reply) => {
    tokens.expireIssued();
    return reply.code(204).send();
  });

  app.get("/_emulator/state", async () => store.snapshot());
}
