import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { installedOrWhyNot } from "../../bench/src/debianPackages";
import { ask, type StartedProcess, startProcess } from "../../scripts/build/process.mjs";
import { projectRoot } from "../../scripts/project.mjs";
import { ensurePythonEnvironment } from "../../scripts/toolchains/python.mjs";
import { makeCertificates } from "./certificates";

// A pipeline runner whose only way out is a forward proxy, as in a
// partner's locked-down network: three network namespaces joined by veth
// pairs, made for the test and removed after it.
//
//   runner ──── proxy (tinyproxy, Basic authentication) ──── service (the emulator over https)
//      └────────────── the service's DNS zone (RFC 2136 goes direct) ──────┘
//
// The runner has no route to the service's API address: a request that
// skips the proxy fails at once (ENETUNREACH). This machine's own namespace
// reaches the proxy only, and holds an unreachable route for the rest of
// the test's range, so nothing here ever leaves the machine. The runner's
// /etc/ssl is a store of the test's own, holding the company's CA as
// update-ca-certificates leaves it: its programs trust the service the way
// a runner image that already trusts the company's CA does, with no
// variable set and the machine's own store untouched.

const SERVICE_PORT = 8443;
const PROXY_PORT = 3128;
const INSPECTING_PORT = 8080;
/** A port the proxy does not let CONNECT reach: its rules answer 403. */
export const FORBIDDEN_PORT = 9443;
export const SERVICE_HOST = "api.dmarc.test";
export const PROXY_USER = { name: "pipeline", password: "Pr0xy-pass-7731" };
/**
 * The TLS-inspecting proxy's users: a password holding a literal `%`, and a
 * user with no password (curl and Go send `token:`), which tinyproxy's
 * BasicAuth cannot hold (letters, digits and `-._` only, never empty) and
 * squid refuses by design ("Users MUST have a password").
 */
export const INSPECTING_USERS = {
  percent: { name: "inspector", password: "100%-sure" },
  userOnly: { name: "token", password: "" },
} as const;
const READY_WITHIN_MS = 60_000;

interface Partner {
  id: string;
  clientId: string;
  clientSecret: string;
}

export interface ProxyNetwork {
  /** The command prefix that runs a command in the runner's namespace. */
  inRunner(command: string, args: string[]): [string, string[]];
  /**
   * The environment of a pipeline on the runner: `pulumi` (found on `path`)
   * runs in the runner's namespace, with the proxy's variables; the CA is
   * in the runner's system store only (this machine's NODE_EXTRA_CA_CERTS,
   * SSL_CERT_FILE and SSL_CERT_DIR left out).
   */
  runnerEnv(path: string): Record<string, string>;
  /** The proxy as the runner reaches it, with its credentials. */
  proxyForRunner: string;
  /** The same proxy as this machine's namespace reaches it (in-process clients). */
  proxyForHost: string;
  /** The service by address, and by the name the runner's hosts file gives it. */
  serviceUrl: string;
  serviceUrlByName: string;
  /** The test's CA, which signed the service's certificate: for NODE_EXTRA_CA_CERTS or caFile. */
  caFile: string;
  /** Where the runner sends RFC 2136 updates: the emulator's zone, reached directly. */
  dnsServer: string;
  dnsKey: { name: string; algorithm: string; secret: string };
  partner: Partner;
  /**
   * Starts a TLS-inspecting proxy beside the first, as some companies run:
   * mitmproxy (from PyPI, in the project's Python environment), which
   * re-signs every certificate with a CA of its own, `caFile`, and asks
   * for the credentials of {@link INSPECTING_USERS}.
   */
  startInspectingProxy(): Promise<{ proxyForRunner: string; caFile: string }>;
  /**
   * Restarts the proxy with its user's password changed to `password`, the
   * old one refused from then on; answers the proxy's address for the
   * runner with the new credentials.
   */
  rotateProxyPassword(password: string): Promise<string>;
  /** The `host:port` of each CONNECT the proxy received, in order. */
  connects(): string[];
  /** The proxy's whole log, to show when a case fails. */
  proxyLog(): string;
  close(): Promise<void>;
}

/** A quick command's output; it fails saying what the command said. */
function sh(command: string, args: string[], env: Record<string, string> = {}): string {
  const answer = ask(command, args, { env });
  if (!answer.ok) throw new Error(`${[command, ...args].join(" ")} failed: ${answer.said}`);
  return answer.stdout;
}

/** A /24 of 10.254.0.0/16 no route of this machine uses yet. */
function freeRange(): string {
  for (let tries = 0; tries < 50; tries++) {
    const octet = 1 + ((randomBytes(1)[0] as number) % 250);
    if (sh("ip", ["-4", "route", "show", "table", "all", `10.254.${octet}.0/24`]).trim() === "")
      return `10.254.${octet}`;
  }
  throw new Error("no free 10.254.x.0/24 range for the test's network");
}

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  shown: () => string,
): Promise<T> {
  const deadline = Date.now() + READY_WITHIN_MS;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await sleep(100);
  }
  throw new Error(`${what} within ${READY_WITHIN_MS} ms:\n${shown()}`);
}

function reachable(host: string, port: number): Promise<true | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 1_000 });
    const settle = (answer: true | undefined) => {
      socket.destroy();
      resolve(answer);
    };
    socket.once("connect", () => settle(true));
    socket.once("error", () => settle(undefined));
    socket.once("timeout", () => settle(undefined));
  });
}

/**
 * A folder whose `pulumi` is the one on `path`, run in the namespace `ns` (the CLI starts its plugins there too),
 * without this machine's OpenSSL store variables: the runner's programs read its own store where OpenSSL looks.
 */
function runnerCommands(folder: string, ns: string, path: string): string {
  const bin = join(folder, "runner-bin");
  const pulumi = sh("sh", ["-c", "command -v pulumi"], { PATH: path }).trim();
  mkdirSync(bin, { recursive: true });
  const run = `exec ip netns exec '${ns}' env -u SSL_CERT_FILE -u SSL_CERT_DIR '${pulumi}' "$@"`;
  writeFileSync(join(bin, "pulumi"), `#!/bin/sh\n${run}\n`, { mode: 0o755 });
  return bin;
}

/** The runner's /etc/ssl (laid over the machine's by `ip netns exec`): the company's CA as update-ca-certificates installs it. */
function installSystemStore(etc: string, caFile: string): void {
  const certs = join(etc, "ssl", "certs");
  mkdirSync(certs, { recursive: true });
  const pem = readFileSync(caFile, "utf8");
  writeFileSync(join(certs, "test-company-root-ca.pem"), pem);
  writeFileSync(join(certs, "ca-certificates.crt"), pem);
}

/** An htpasswd file of `users` in the {SHA} form (base64 of SHA-1), which mitmproxy's proxyauth reads. */
function htpasswd(file: string, users: ReadonlyArray<{ name: string; password: string }>): string {
  const sha = (password: string) => createHash("sha1").update(password).digest("base64");
  writeFileSync(file, users.map(({ name, password }) => `${name}:{SHA}${sha(password)}\n`).join(""));
  return file;
}

export async function startProxyNetwork(): Promise<ProxyNetwork> {
  const missing = await installedOrWhyNot(["tinyproxy"], () => (existsSync("/usr/bin/tinyproxy") ? [] : ["tinyproxy"]));
  if (missing) throw new Error(missing);
  const folder = mkdtempSync(join(tmpdir(), "dmarc-proxy-network-"));
  const id = randomBytes(3).toString("hex");
  const names = { runner: `dmarc-${id}-run`, proxy: `dmarc-${id}-px`, service: `dmarc-${id}-svc` };
  const net = freeRange();
  const address = {
    serviceApi: `${net}.2`,
    proxyToRunner: `${net}.5`,
    runner: `${net}.6`,
    host: `${net}.9`,
    proxyToHost: `${net}.10`,
    runnerDns: `${net}.13`,
    serviceDns: `${net}.14`,
  };
  const children: StartedProcess[] = [];
  const cleanups: Array<() => void> = [];
  const close = async () => {
    for (const { child } of children) child.kill("SIGKILL");
    for (const cleanup of cleanups.reverse()) {
      try {
        cleanup();
      } catch {
        // Removing what is already gone: a namespace takes its links with it.
      }
    }
    rmSync(folder, { recursive: true, force: true });
  };
  try {
    for (const name of Object.values(names)) {
      sh("ip", ["netns", "add", name]);
      cleanups.push(() => sh("ip", ["netns", "delete", name]));
      sh("ip", ["-n", name, "link", "set", "lo", "up"]);
    }
    // Each link: [namespace or undefined for this one, address] at both ends of a /30.
    const links: Array<[string | undefined, string, string | undefined, string]> = [
      [names.proxy, `${net}.1`, names.service, address.serviceApi],
      [names.proxy, address.proxyToRunner, names.runner, address.runner],
      [undefined, address.host, names.proxy, address.proxyToHost],
      [names.runner, address.runnerDns, names.service, address.serviceDns],
    ];
    links.forEach(([leftNs, leftAddress, rightNs, rightAddress], index) => {
      const [left, right] = [`dm${id}${index}a`, `dm${id}${index}b`];
      sh("ip", ["link", "add", left, "type", "veth", "peer", "name", right]);
      cleanups.push(() => sh("ip", ["link", "delete", left]));
      for (const [end, ns, cidr] of [
        [left, leftNs, leftAddress],
        [right, rightNs, rightAddress],
      ] as const) {
        if (ns) sh("ip", ["link", "set", end, "netns", ns]);
        const scope = ns ? ["-n", ns] : [];
        sh("ip", [...scope, "addr", "add", `${cidr}/30`, "dev", end]);
        sh("ip", [...scope, "link", "set", end, "up"]);
      }
    });
    sh("ip", ["route", "add", "unreachable", `${net}.0/24`]);
    cleanups.push(() => sh("ip", ["route", "delete", "unreachable", `${net}.0/24`]));
    // `ip netns exec` lays /etc/netns/<name>/hosts over /etc/hosts: the runner and the proxy know the service's name.
    for (const ns of [names.runner, names.proxy]) {
      const etc = join("/etc/netns", ns);
      mkdirSync(etc, { recursive: true });
      writeFileSync(join(etc, "hosts"), `127.0.0.1 localhost\n${address.serviceApi} ${SERVICE_HOST}\n`);
      cleanups.push(() => rmSync(etc, { recursive: true, force: true }));
    }

    const { caFile, certFile, keyFile } = makeCertificates(folder, { dns: [SERVICE_HOST], ip: [address.serviceApi] });
    installSystemStore(join("/etc/netns", names.runner), caFile);
    const emulator = startProcess("ip", [
      "netns",
      "exec",
      names.service,
      process.execPath,
      join(projectRoot, "emulator", "bin", "dmarc-emulator.js"),
      "--host",
      address.serviceApi,
      "--port",
      String(SERVICE_PORT),
      "--tls-cert",
      certFile,
      "--tls-key",
      keyFile,
      "--dns-host",
      address.serviceDns,
      "--dns-check-interval",
      "250",
      "--retry-scale",
      "0.001",
      "--log-level",
      "warn",
    ]);
    children.push(emulator);
    await until(
      "the emulator did not start",
      () => (emulator.said().includes("Press Ctrl+C") ? true : undefined),
      () => emulator.said(),
    );
    const banner = emulator.said();
    const field = (label: string) => new RegExp(`${label}:\\s+(\\S+)`).exec(banner)?.[1] ?? "";
    const dnsServer = /Simulated DNS zone on (\S+)/.exec(banner)?.[1] ?? "";
    const partnerId = /Partners:\n\s+(\S+)/.exec(banner)?.[1] ?? "";

    const log = join(folder, "tinyproxy.log");
    const proxyLog = () => readFileSync(log, "utf8");
    writeFileSync(log, "");
    // Its log is appended to across a restart, so connects() counts every CONNECT.
    const startTinyproxy = async (password: string): Promise<StartedProcess> => {
      const conf = join(folder, "tinyproxy.conf");
      writeFileSync(
        conf,
        [
          `Port ${PROXY_PORT}`,
          "Timeout 60",
          `LogFile "${log}"`,
          "LogLevel Info",
          "MaxClients 64",
          `Allow ${net}.0/24`,
          `BasicAuth ${PROXY_USER.name} ${password}`,
          `ConnectPort ${SERVICE_PORT}`,
          `PidFile "${join(folder, "tinyproxy.pid")}"`,
        ].join("\n"),
      );
      const started = startProcess("ip", ["netns", "exec", names.proxy, "tinyproxy", "-d", "-c", conf]);
      children.push(started);
      await until("the proxy did not listen", () => reachable(address.proxyToHost, PROXY_PORT), proxyLog);
      return started;
    };
    let tinyproxy = await startTinyproxy(PROXY_USER.password);
    const rotateProxyPassword = async (password: string) => {
      tinyproxy.child.kill("SIGKILL");
      await tinyproxy.ended;
      tinyproxy = await startTinyproxy(password);
      return `http://${PROXY_USER.name}:${password}@${address.proxyToRunner}:${PROXY_PORT}`;
    };

    const startInspectingProxy = async () => {
      // Through the environment's interpreter: the venv's own scripts name the folder it was made in.
      const python = await ensurePythonEnvironment();
      const confdir = join(folder, "mitmproxy");
      const inspecting = startProcess("ip", [
        "netns",
        "exec",
        names.proxy,
        python,
        "-c",
        "import sys; from mitmproxy.tools.main import mitmdump; sys.exit(mitmdump())",
        "--listen-port",
        String(INSPECTING_PORT),
        "--set",
        `confdir=${confdir}`,
        "--set",
        `ssl_verify_upstream_trusted_ca=${caFile}`,
        "--set",
        "termlog_verbosity=warn",
        "--set",
        `proxyauth=@${htpasswd(join(folder, "mitmproxy.htpasswd"), Object.values(INSPECTING_USERS))}`,
      ]);
      children.push(inspecting);
      const output = () => inspecting.said();
      const inspectingCa = join(confdir, "mitmproxy-ca-cert.pem");
      await until(
        "mitmproxy did not listen",
        async () => {
          const { exitCode } = inspecting.child;
          if (exitCode !== null) throw new Error(`mitmproxy exited (${exitCode}):\n${output()}`);
          return existsSync(inspectingCa) ? reachable(address.proxyToHost, INSPECTING_PORT) : undefined;
        },
        output,
      );
      return { proxyForRunner: `http://${address.proxyToRunner}:${INSPECTING_PORT}`, caFile: inspectingCa };
    };
    const credentials = `${PROXY_USER.name}:${PROXY_USER.password}@`;
    const proxyForRunner = `http://${credentials}${address.proxyToRunner}:${PROXY_PORT}`;
    return {
      inRunner: (command, args) => ["ip", ["netns", "exec", names.runner, command, ...args]],
      runnerEnv: (path) => ({
        PATH: `${runnerCommands(folder, names.runner, path)}:${path}`,
        HTTPS_PROXY: proxyForRunner,
        NO_PROXY: "localhost,127.0.0.1",
        // Empty is unset to Node.js: this machine's own value stays out of the runner.
        NODE_EXTRA_CA_CERTS: "",
      }),
      rotateProxyPassword,
      proxyForRunner,
      startInspectingProxy,
      proxyForHost: `http://${credentials}${address.proxyToHost}:${PROXY_PORT}`,
      serviceUrl: `https://${address.serviceApi}:${SERVICE_PORT}`,
      serviceUrlByName: `https://${SERVICE_HOST}:${SERVICE_PORT}`,
      caFile,
      dnsServer,
      dnsKey: { name: field("key name"), algorithm: field("key algorithm"), secret: field("key secret") },
      partner: { id: partnerId, clientId: field("client id"), clientSecret: field("client secret") },
      connects: () => [...proxyLog().matchAll(/CONNECT (\S+) HTTP/g)].map((match) => match[1] as string),
      proxyLog,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
