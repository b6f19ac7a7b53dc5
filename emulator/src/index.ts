import { setMaxListeners } from "node:events";
import type { FastifyInstance } from "fastify";
import pino, { type Logger } from "pino";
import { Tokens } from "./auth";
import type { Context } from "./context";
import { Dispatcher } from "./delivery";
import { dmarcRecordValue, parseRecordHost } from "./dns/dmarc";
import { Verifier } from "./dns/verifier";
import { SimulatedZone, type ZoneKey } from "./dns/zone";
import { FaultSpec, Faults } from "./faults";
import { type EmulatorOptions, type ResolvedOptions, resolveOptions } from "./options";
import { type EmulatorPartner, PartnerDirectory } from "./partners";
import type { ProfileName } from "./profiles";
import { RequestLog } from "./requestLog";
import { buildServer } from "./server";
import { readStateFile, StateFileWriter } from "./stateFile";
import { Stats } from "./stats";
import { domainKey, Store } from "./store";

export type { ZoneKey } from "./dns/zone";
export type { EmulatorOptions } from "./options";
export { DEMO_PARTNERS, defaultCatalogue, type EmulatorPartner, loadPartnersFile } from "./partners";
export { PROFILE_NAMES, type ProfileName } from "./profiles";
export type { RequestWindow, StatsView } from "./stats";
export type { StateSnapshot } from "./store";

export interface RunningEmulator {
  /** Base URL, e.g. http://127.0.0.1:4010. */
  url: string;
  partners: EmulatorPartner[];
  /** "127.0.0.1:port" (UDP and TCP) of the simulated DNS zone, when verification uses it. */
  dnsServer?: string;
  /** Which self-description of the service the answers follow (profiles.ts). */
  profile: ProfileName;
  /** The TSIG key RFC 2136 updates to the simulated zone are signed with, when there is one. */
  dnsKey?: ZoneKey;
  close(): Promise<void>;
}

function createLogger(option: EmulatorOptions["logger"]): Logger {
  const destination = pino.destination({ dest: 2, sync: true });
  if (!option) return pino({ level: "silent" }, destination);
  return pino(option === true ? { level: "info" } : option, destination);
}

function urlHost(host: string): string {
  if (host === "0.0.0.0") return "127.0.0.1";
  if (host === "::") return "[::1]";
  return host.includes(":") ? `[${host}]` : host;
}

/** Verification resolves through the configured DNS server, or else through the simulated zone served here. */
async function setUpDns(
  config: ResolvedOptions,
  store: Store,
  log: Logger,
): Promise<{ resolver: string; zone?: SimulatedZone }> {
  if (config.dns.resolver) return { resolver: config.dns.resolver };
  // The service serves the TXT record behind each CNAME target it hands out.
  const zone = new SimulatedZone(
    store,
    (name) => {
      const target = parseRecordHost(name);
      return target && store.domains.has(domainKey(target.organizationId, target.domain))
        ? dmarcRecordValue(target.organizationId)
        : undefined;
    },
    log.child({ component: "dns" }),
    config.dns.tsigKey,
  );
  return { resolver: await zone.listen(config.dns.host, config.dns.port), zone };
}

/** The state file, when one is configured: the store starts from it and writes back to it as it changes. */
function persistedStore(config: ResolvedOptions, log: Logger): { store: Store; stateWriter?: StateFileWriter } {
  let stateWriter: StateFileWriter | undefined;
  const store = new Store(() => stateWriter?.schedule());
  if (!config.stateFile) return { store };
  const snapshot = readStateFile(config.stateFile);
  if (snapshot) store.restore(snapshot);
  stateWriter = new StateFileWriter(config.stateFile, () => store.snapshot(), log);
  return { store, stateWriter };
}

/** What a start opens; `close` shuts down what of it is open, whether the start finished or failed. */
interface Opened {
  config: ResolvedOptions;
  log: Logger;
  partners: PartnerDirectory;
  store: Store;
  stateWriter?: StateFileWriter | undefined;
  requestLog?: RequestLog | undefined;
  dispatcher: Dispatcher;
  shutdown: AbortController;
  zone?: SimulatedZone | undefined;
  verifier?: Verifier | undefined;
  app?: FastifyInstance | undefined;
}

async function closeOpened(opened: Opened): Promise<void> {
  opened.shutdown.abort();
  await opened.verifier?.close();
  opened.dispatcher.close();
  await opened.app?.close();
  await opened.zone?.close();
  await opened.stateWriter?.flush();
  await opened.requestLog?.close();
}

function open(options: EmulatorOptions): Opened {
  const config = resolveOptions(options);
  const log = createLogger(config.logger);
  const partners = new PartnerDirectory(config.partners);
  const { store, stateWriter } = persistedStore(config, log);
  const requestLog = config.requestLogFile ? new RequestLog(config.requestLogFile) : undefined;
  const dispatcher = new Dispatcher(store, {
    timeoutMs: config.webhookTimeoutMs,
    retryScale: config.retryScale,
    log: log.child({ component: "webhooks" }),
  });
  const shutdown = new AbortController();
  // Every request held by injected latency listens for the shutdown: as many listeners as requests in flight.
  setMaxListeners(0, shutdown.signal);
  return { config, log, partners, store, stateWriter, requestLog, dispatcher, shutdown };
}

function contextOf(opened: Opened, verifier: Verifier, baseUrl: () => string): Context {
  const { config, store, partners, dispatcher, zone } = opened;
  const faults = new Faults();
  if (config.rateLimit) faults.add(FaultSpec.parse({ route: "*", rateLimit: config.rateLimit }));
  return {
    store,
    partners,
    tokens: new Tokens(store, partners, config.tokenTtlSeconds),
    dispatcher,
    verifier,
    zone,
    faults,
    stats: new Stats(),
    baseUrl,
    magicLinkTtlSeconds: config.magicLinkTtlSeconds,
    profile: config.profile,
  };
}

/** Sets up DNS verification, then serves the API and starts delivery and verification. */
async function serve(opened: Opened): Promise<Omit<RunningEmulator, "close">> {
  const { config, log, store, dispatcher } = opened;
  const dns = await setUpDns(config, store, log);
  opened.zone = dns.zone;
  const verifier = new Verifier(store, dispatcher, {
    resolver: dns.resolver,
    checkIntervalMs: config.dns.checkIntervalMs,
    windowMs: config.dns.windowMs,
    verifiedStatus: config.profile.verifiedStatus,
    log: log.child({ component: "verification" }),
  });
  opened.verifier = verifier;
  let baseUrl = "";
  const ctx = contextOf(opened, verifier, () => baseUrl);
  const app = buildServer({
    ctx,
    log,
    requestLog: opened.requestLog,
    shutdown: opened.shutdown.signal,
    tls: config.tls,
  });
  opened.app = app;
  await app.listen({ port: config.port, host: config.host });
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  baseUrl = `${config.tls ? "https" : "http"}://${urlHost(config.host)}:${port}`;
  dispatcher.resume();
  verifier.start();
  const zone = opened.zone;
  log.info({ url: baseUrl, dnsServer: zone ? dns.resolver : undefined }, "DMARC partner API emulator ready");
  return {
    url: baseUrl,
    partners: opened.partners.all,
    ...(zone ? { dnsServer: dns.resolver, dnsKey: zone.zoneKey } : {}),
    profile: config.profile.name,
  };
}

/** Starts the emulator: HTTP API and control plane, webhook delivery, DNS verification. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const opened = open(options);
  const close = () => closeOpened(opened);
  try {
    return { ...(await serve(opened)), close };
  } catch (error) {
    await close();
    throw error;
  }
}
