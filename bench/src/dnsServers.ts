import { randomBytes } from "node:crypto";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  authoritativeRecords,
  type DnsTarget,
  Opcode,
  PUBLISHED_TYPES,
  type PublishedType,
  RecordClass,
  RecordType,
  type ResourceRecord,
  readName,
  recordData,
  requestMessage,
  signedRequest,
  type TsigAlgorithm,
  txtValue,
  zoneOf,
} from "pulumi-dmarc-partner/dns";
import { installedOrWhyNot } from "./debianPackages";
import { freePort } from "./loopback";
import { startProcess } from "./processes";

// Real authoritative servers for the RFC 2136 tests and the bench's
// publishing run: BIND 9 and Knot DNS from Debian's packages (installed with
// apt-get when missing), each on a free loopback port with its own temporary
// folder, zones and TSIG keys, stopped and deleted afterwards. The tests
// import it from test/support/dnsServers.ts.
//
// Each server has two zones. In the published zone (ZONE unless the caller
// names another) the publishing key may update only the TXT and CNAME
// records of the names it is given (DMARC_NAMES by default), or of every
// name in the zone; in LOCKED_ZONE it may update nothing (the REFUSED case;
// Knot lets it query there, as an operator who shares one key between zones
// would). An administrator key may update anything: the tests change records
// with it "outside Pulumi".

const BINARIES = { bind: "/usr/sbin/named", knot: "/usr/sbin/knotd" } as const;
const PACKAGES = ["bind9", "bind9-utils", "knot"];
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;
const POLL_MS = 200;

export type DnsServerKind = keyof typeof BINARIES;
export const ZONE = "acme.example";
export const LOCKED_ZONE = "locked.example";
/** The names the publishing key may update in ZONE. */
export const DMARC_NAMES = [`_dmarc.${ZONE}`, `_dmarc.shop.${ZONE}`, `_dmarc.mail.${ZONE}`, `_dmarc.news.${ZONE}`];

/** The zone the publishing key may write to, and the names in it whose TXT and CNAME records it may update. */
export interface PublishedZone {
  zone: string;
  /** Fully qualified; every name of the zone when left out. */
  names?: readonly string[];
}

const TEST_ZONE: PublishedZone = { zone: ZONE, names: DMARC_NAMES };

interface TestKey {
  name: string;
  algorithm: TsigAlgorithm;
  /** base64, as tsig-keygen prints it. */
  secret: string;
}

export interface RunningDnsServer {
  kind: DnsServerKind;
  /** "127.0.0.1:<port>" */
  address: string;
  port: number;
  /** The key that may publish in the published zone only (DMARC_NAMES of ZONE unless the caller named another). */
  key: TestKey;
  /** The key that may update anything in both zones. */
  adminKey: TestKey;
  /** A DNS target signed with a key, for the dns modules. */
  target(key: TestKey): DnsTarget;
  /** What the published zone holds at the name, read with the administrator key: `TXT <text>` or `CNAME <target>`, TTL after `@`. */
  served(name: string): Promise<string[]>;
  /** Makes this record the only TXT or CNAME at the name (TTL 300), as someone outside Pulumi would. */
  put(name: string, type: PublishedType, value: string): Promise<void>;
  /** Adds a TXT record beside what the name holds. */
  addTxt(name: string, value: string): Promise<void>;
  /** The server's own log, for a failing test's message. */
  log(): string;
  stop(): Promise<void>;
  /** Stops the server as a crash or an administrator would, keeping its zones: nothing answers on its port until `resume`. */
  halt(): Promise<void>;
  /**
   * Starts the server again on its port with its zones, records and keys (halted first when running);
   * `published` (of the same zone) grants the publishing key other names from now on.
   */
  resume(published?: PublishedZone): Promise<void>;
}

function generatedKey(name: string, algorithm: TsigAlgorithm): TestKey {
  return { name, algorithm, secret: randomBytes(32).toString("base64") };
}

function targetOf(port: number, key: TestKey): DnsTarget {
  return {
    server: { host: "127.0.0.1", port },
    key: { name: key.name, algorithm: key.algorithm, secret: Buffer.from(key.secret, "base64") },
  };
}

function zoneFile(zone: string): string {
  return [
    "$TTL 3600",
    `@ IN SOA ns.${zone}. hostmaster.${zone}. 1 3600 600 86400 60`,
    `@ IN NS ns.${zone}.`,
    "ns IN A 127.0.0.1",
    "www IN A 127.0.0.1",
    "",
  ].join("\n");
}

interface ServerSetup {
  folder: string;
  port: number;
  key: TestKey;
  admin: TestKey;
  published: PublishedZone;
  /** Started again over the records of an earlier start. */
  restarted?: boolean;
}

function bindConfig({ folder, port, key, admin, published }: ServerSetup): string {
  const keyBlock = (k: TestKey) => `key "${k.name}" { algorithm ${k.algorithm}; secret "${k.secret}"; };`;
  const grants = published.names
    ? published.names.map((name) => `grant ${key.name} name ${name}. TXT CNAME;`).join(" ")
    : `grant ${key.name} zonesub TXT CNAME;`;
  const zone = (name: string, policy: string) =>
    `zone "${name}" { type primary; file "${join(folder, `${name}.zone`)}"; update-policy { ${policy} }; };`;
  return [
    keyBlock(key),
    keyBlock(admin),
    `options { directory "${folder}"; pid-file "${join(folder, "named.pid")}"; listen-on port ${port} { 127.0.0.1; };`,
    `  listen-on-v6 { none; }; recursion no; dnssec-validation no; notify no;`,
    `  session-keyfile "${join(folder, "session.key")}"; managed-keys-directory "${folder}"; };`,
    "controls { };",
    zone(published.zone, `${grants} grant ${admin.name} zonesub ANY;`),
    zone(LOCKED_ZONE, `grant ${admin.name} zonesub ANY;`),
    "",
  ].join("\n");
}

/** Knot's ACL lines that restrict the publishing key to the names, relative to the zone; none for every name. */
function knotOwners(published: PublishedZone): string[] {
  if (!published.names) return [];
  const relativeNames = published.names.map((name) => name.slice(0, -(published.zone.length + 1)));
  return [
    "    update-owner: name",
    "    update-owner-match: equal",
    `    update-owner-name: [${relativeNames.join(", ")}]`,
  ];
}

function knotConfig({ folder, port, key, admin, published, restarted }: ServerSetup): string {
  const keyItem = (k: TestKey) => `  - id: ${k.name}\n    algorithm: ${k.algorithm}\n    secret: ${k.secret}`;
  return [
    "server:",
    `  rundir: ${folder}`,
    `  listen: 127.0.0.1@${port}`,
    "log:",
    "  - target: stderr",
    "    any: info",
    "database:",
    `  storage: ${folder}`,
    "key:",
    keyItem(key),
    keyItem(admin),
    "acl:",
    "  - id: dmarc-publish",
    `    key: ${key.name}`,
    "    action: update",
    "    update-type: [TXT, CNAME]",
    ...knotOwners(published),
    "  - id: dmarc-read",
    `    key: ${key.name}`,
    "    action: query",
    "  - id: admin",
    `    key: ${admin.name}`,
    "    action: update",
    "template:",
    "  - id: default",
    `    storage: ${folder}`,
    "    zonefile-sync: -1",
    // Started again, the zone comes from the journal alone: the zone file still holds the first start's records.
    `    zonefile-load: ${restarted ? "none" : "difference-no-serial"}`,
    "    journal-content: all",
    "zone:",
    `  - domain: ${published.zone}`,
    "    acl: [dmarc-publish, admin]",
    `  - domain: ${LOCKED_ZONE}`,
    "    acl: [dmarc-read, admin]",
    "",
  ].join("\n");
}

function record(name: string, type: PublishedType, value: string): ResourceRecord {
  return { name, type: PUBLISHED_TYPES[type], class: RecordClass.IN, ttl: 300, data: recordData(type, value) };
}

/** "Delete an RRset" (RFC 2136 §2.5.2) of each type a DMARC record can have: what an administrator's overwrite does. */
function everyPublishedSet(name: string): ResourceRecord[] {
  return Object.values(PUBLISHED_TYPES).map((type) => ({
    name,
    type,
    class: RecordClass.ANY,
    ttl: 0,
    data: Buffer.alloc(0),
  }));
}

/** An unguarded update signed with the administrator key, as someone changing the zone by hand would send. */
async function adminUpdate(admin: DnsTarget, zone: string, name: string, updates: ResourceRecord[]): Promise<void> {
  const zoneRecord = { name: zone, type: RecordType.SOA, class: RecordClass.IN };
  await signedRequest(admin, requestMessage(Opcode.UPDATE, zoneRecord, updates), {
    zone,
    request: `the administrator's update of ${name}`,
  });
}

/** A server's process: started at once, stopped by `halt`; `exit` says how it ended, undefined while it runs. */
function serverProcess(command: string[], logFile: string) {
  const logFd = openSync(logFile, "a");
  const { child } = startProcess(command[0] as string, command.slice(1), { output: logFd });
  closeSync(logFd);
  const state: { exit?: string } = {};
  const exited = new Promise<void>((resolve) =>
    child.once("exit", (code, signal) => {
      state.exit = `code ${code}, signal ${signal}`;
      resolve();
    }),
  );
  return {
    exit: () => state.exit,
    halt: async () => {
      if (state.exit !== undefined) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}

const COMMANDS: Record<DnsServerKind, (config: string) => string[]> = {
  bind: (config) => [BINARIES.bind, "-g", "-c", config],
  knot: (config) => [BINARIES.knot, "-c", config],
};
const CONFIGS: Record<DnsServerKind, typeof bindConfig> = { bind: bindConfig, knot: knotConfig };

/**
 * Why the servers cannot run here, or undefined when they can: missing
 * binaries are installed with apt-get first (as root, or where the packages are).
 */
export function dnsServersUnavailable(): Promise<string | undefined> {
  return installedOrWhyNot(PACKAGES, () => Object.values(BINARIES).filter((binary) => !existsSync(binary)));
}

async function waitUntil(what: string, ready: () => Promise<boolean>, exited: () => string | undefined): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const exit = exited();
    if (exit) throw new Error(`${what} exited while starting (${exit})`);
    if (await ready()) return;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  throw new Error(`${what} did not answer within ${START_TIMEOUT_MS / 1000} s`);
}

/** Starts a server with its zones and keys; its publishing key signs with `algorithm` and may write to `published`. */
export async function startDnsServer(
  kind: DnsServerKind,
  algorithm: TsigAlgorithm = "hmac-sha256",
  published: PublishedZone = TEST_ZONE,
): Promise<RunningDnsServer> {
  const folder = mkdtempSync(join(tmpdir(), `dmarc-dns-${kind}-`));
  const port = await freePort();
  const key = generatedKey(`dmarc-${kind}-key`, algorithm);
  const adminKey = generatedKey(`admin-${kind}-key`, "hmac-sha512");
  const zone = published.zone;
  for (const name of [zone, LOCKED_ZONE]) writeFileSync(join(folder, `${name}.zone`), zoneFile(name));
  const config = join(folder, `${kind}.conf`);
  const logFile = join(folder, "server.log");
  const log = () => (existsSync(logFile) ? readFileSync(logFile, "utf8") : "");
  const target = (k: TestKey) => targetOf(port, k);
  const answers = async () =>
    (await zoneOf(target(adminKey), `www.${zone}`).catch(() => undefined)) === zone &&
    (await zoneOf(target(adminKey), LOCKED_ZONE).catch(() => undefined)) === LOCKED_ZONE;
  let server: ReturnType<typeof serverProcess> | undefined;
  const halt = async () => server?.halt();
  const stop = async () => {
    await halt();
    rmSync(folder, { recursive: true, force: true });
  };
  const resume = async (grants: PublishedZone = published) => {
    await halt();
    const restarted = server !== undefined;
    writeFileSync(config, CONFIGS[kind]({ folder, port, key, admin: adminKey, published: grants, restarted }));
    const started = serverProcess(COMMANDS[kind](config), logFile);
    server = started;
    await waitUntil(`${kind} on 127.0.0.1:${port}`, answers, started.exit);
  };
  try {
    await resume();
  } catch (error) {
    const text = log();
    await stop();
    throw new Error(`${(error as Error).message}; its log:\n${text}`);
  }
  const admin = target(adminKey);
  return {
    kind,
    address: `127.0.0.1:${port}`,
    port,
    key,
    adminKey,
    target,
    log,
    stop,
    halt,
    resume,
    served: async (name) =>
      (await authoritativeRecords(admin, zone, name, Object.values(PUBLISHED_TYPES))).map((record) =>
        record.type === RecordType.TXT
          ? `TXT ${txtValue(record.data)} @${record.ttl}`
          : `CNAME ${readName(record.data).name} @${record.ttl}`,
      ),
    put: (name, type, value) => adminUpdate(admin, zone, name, [...everyPublishedSet(name), record(name, type, value)]),
    addTxt: (name, value) => adminUpdate(admin, zone, name, [record(name, "TXT", value)]),
  };
}
