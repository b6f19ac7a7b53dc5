import { BlockList, isIP } from "node:net";
import { isLoopbackHost } from "../../api";
import { DmarcConfigError } from "../errors";
import { rememberSecret } from "../redaction";

// Which forward proxy, if any, a request to the service goes through. The
// rules are curl's and Go's (net/http's ProxyFromEnvironment), which every
// other tool in a partner's pipeline follows: HTTPS_PROXY for https://
// addresses and HTTP_PROXY for http:// ones, upper case before lower case as
// Go reads them, NO_PROXY's entries sending a host direct, loopback never
// proxied. The client's own settings, when given, stand in for the variables.

/** The forward proxy a request goes through, and where that choice came from. */
export interface ProxyRoute {
  /** The proxy's address, without its credentials. */
  readonly url: URL;
  /** The Proxy-Authorization header its credentials make (Basic), handed to the proxy agent only; undefined: none. */
  readonly authorization: string | undefined;
  /** The proxy as messages show it: scheme, host and port, never the credentials. */
  readonly shown: string;
  /** The setting or environment variable that chose it, as messages name it. */
  readonly chosenBy: string;
  /** The setting or variable whose list a host is added to, to reach it directly. */
  readonly bypassedBy: string;
}

/** The client's own proxy settings; unset, the environment decides. */
export interface ProxySettings {
  httpsProxy?: string | undefined;
  noProxy?: string | undefined;
}

/** How messages name the client's settings: the provider's `dmarc:*` keys and variables, or the client options. */
const PROXY_SETTING_NAMES = {
  httpsProxy: "httpsProxy (dmarc:httpsProxy, DMARC_HTTPS_PROXY)",
  noProxy: "noProxy (dmarc:noProxy, DMARC_NO_PROXY)",
} as const;

const PROXY_VARIABLES = {
  "https:": ["HTTPS_PROXY", "https_proxy"],
  "http:": ["HTTP_PROXY", "http_proxy"],
} as const;
const NO_PROXY_VARIABLES = ["NO_PROXY", "no_proxy"] as const;

/** Why a proxy address cannot be used, or undefined when it can. */
export function proxyAddressProblem(value: string): string | undefined {
  const url = parseProxyAddress(value);
  if (url === undefined) return "is not an address such as http://proxy.example.com:3128";
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return `must be an http:// or https:// proxy (got ${url.protocol})`;
  }
  if (url.pathname !== "/" || url.search !== "" || url.hash !== "") return "must be a proxy's address only, no path";
  return undefined;
}

// A proxy written without a scheme (`proxy.corp:3128`) is an http:// one, as curl and Go take it.
function parseProxyAddress(value: string): URL | undefined {
  const text = value.trim();
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
  if (!URL.canParse(withScheme)) return undefined;
  const url = new URL(withScheme);
  return url.hostname === "" ? undefined : url;
}

/** A proxy address as messages show it: no user name or password. */
function shownProxy(url: URL): string {
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  const credentials = url.username !== "" || url.password !== "" ? "***@" : "";
  return `${url.protocol}//${credentials}${url.hostname}:${port}`;
}

function firstSet(env: NodeJS.ProcessEnv, names: readonly string[]): { name: string; value: string } | undefined {
  for (const name of names) {
    const value = env[name];
    if (value !== undefined && value.trim() !== "") return { name, value };
  }
  return undefined;
}

/**
 * The proxy a request to `target` goes through, or undefined to connect
 * directly. An unusable proxy address throws, naming where it was set.
 */
export function proxyFor(
  target: URL,
  settings: ProxySettings,
  env: NodeJS.ProcessEnv = process.env,
): ProxyRoute | undefined {
  if (isLoopbackHost(target.hostname)) return undefined;
  const variables = PROXY_VARIABLES[target.protocol as keyof typeof PROXY_VARIABLES];
  if (variables === undefined) return undefined;
  const chosen =
    settings.httpsProxy !== undefined && target.protocol === "https:"
      ? { name: PROXY_SETTING_NAMES.httpsProxy, value: settings.httpsProxy }
      : firstSet(env, variables);
  if (chosen === undefined) return undefined;
  const bypass =
    settings.noProxy !== undefined
      ? { name: PROXY_SETTING_NAMES.noProxy, value: settings.noProxy }
      : (firstSet(env, NO_PROXY_VARIABLES) ?? { name: NO_PROXY_VARIABLES[0], value: "" });
  if (bypasses(target, bypass.value)) return undefined;
  const problem = proxyAddressProblem(chosen.value);
  const url = parseProxyAddress(chosen.value);
  if (problem !== undefined || url === undefined) {
    throw new ProxyAddressError(`The proxy in ${chosen.name} ${problem ?? "cannot be used"}.`);
  }
  return {
    url: withoutCredentials(url),
    authorization: basicAuthorization(url),
    shown: shownProxy(url),
    chosenBy: chosen.name,
    bypassedBy: bypass.name,
  };
}

/**
 * Percent-decoding as curl does it: each `%` and two hex digits is that
 * byte, any other `%` is itself (a password written as it is, `100%-sure`,
 * is taken as such). The URL parser has already percent-encoded whatever is
 * not ASCII, so every other character is one byte.
 */
function curlDecoded(text: string): Buffer {
  return Buffer.from(
    text.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
    "latin1",
  );
}

/**
 * The Basic credentials of the address, as curl and Go send them: a user
 * without a password is `user:`. The password is remembered for redaction
 * whatever its length, decoded and as written.
 */
function basicAuthorization(url: URL): string | undefined {
  if (url.username === "" && url.password === "") return undefined;
  const password = curlDecoded(url.password);
  for (const form of [password.toString("utf8"), url.password]) rememberSecret(form, { anyLength: true });
  const pair = Buffer.concat([curlDecoded(url.username), Buffer.from(":"), password]);
  return `Basic ${pair.toString("base64")}`;
}

function withoutCredentials(url: URL): URL {
  const bare = new URL(url.href);
  bare.username = "";
  bare.password = "";
  return bare;
}

/** A proxy setting or variable holds something that is not a proxy's address: the client's options cannot be used. */
export class ProxyAddressError extends DmarcConfigError {}

/**
 * Whether a NO_PROXY list sends `target` direct: `*` sends everything;
 * an IP address or CIDR range matches a literal address; a host name
 * matches itself and its subdomains, one with a leading dot (or `*.`) only
 * its subdomains; an entry with a port matches that port only.
 */
export function bypasses(target: URL, noProxy: string): boolean {
  const host = target.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  const port = target.port || (target.protocol === "https:" ? "443" : "80");
  for (const raw of noProxy.split(/[\s,]+/)) {
    const entry = raw.trim().toLowerCase();
    if (entry === "") continue;
    if (entry === "*") return true;
    const { name, entryPort } = splitPort(entry);
    if (entryPort !== undefined && entryPort !== port) continue;
    if (matchesAddress(host, name) ?? matchesName(host, name)) return true;
  }
  return false;
}

function splitPort(entry: string): { name: string; entryPort: string | undefined } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) return { name: bracketed[1] as string, entryPort: bracketed[2] };
  // An IPv6 address or range has colons of its own and no port.
  if (isIP(entry.split("/")[0] as string) === 6) return { name: entry, entryPort: undefined };
  const withPort = /^(.*):(\d+)$/.exec(entry);
  return withPort ? { name: withPort[1] as string, entryPort: withPort[2] } : { name: entry, entryPort: undefined };
}

/** An address or range entry's verdict on a literal address; undefined when either is a name. */
function matchesAddress(host: string, entry: string): boolean | undefined {
  const family = isIP(host);
  const [address = "", prefix] = entry.split("/");
  const entryFamily = isIP(address);
  if (entryFamily === 0) return undefined;
  if (family === 0) return false;
  if (family !== entryFamily) return false;
  const type = family === 4 ? "ipv4" : "ipv6";
  const list = new BlockList();
  if (prefix === undefined) list.addAddress(address, type);
  else if (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128)) {
    list.addSubnet(address, Number(prefix), type);
  } else return false;
  return list.check(host, type);
}

function matchesName(host: string, entry: string): boolean {
  const suffixOnly = entry.startsWith(".") || entry.startsWith("*.");
  const name = entry.replace(/^\*?\./, "");
  if (name === "") return false;
  return host.endsWith(`.${name}`) || (!suffixOnly && host === name);
}
