import { certificateFailure } from "../tls/failures";
import type { Trust } from "../tls/trust";
import type { ProxyRoute } from "./route";
import type { ProxyLeg } from "./tunnel";

// What a failure on the way through a forward proxy means, and what the
// reader does about it: one row per answer the proxy can give to CONNECT,
// per way its own connection can fail (read from the fault's fields, never
// its message), and for a proxy silent after accepting the connection. A
// refusal by the proxy's rules or for want of credentials is not retried:
// the next attempt meets the same rule; nor is a proxy addressed with the
// wrong scheme, silent, or whose certificate is refused. A proxy that is
// down or cannot reach the service may be back within the retry bounds.

/** A failure described for a TransportFault: its message, whether retrying can help, and the advice. */
export interface ProxyFailure {
  message: string;
  permanent: boolean;
  advice: string;
}

interface FailureRow {
  says: string;
  permanent: boolean;
  advice: (proxy: ProxyRoute) => string;
}

const bypassAdvice = (proxy: ProxyRoute) =>
  `if the service is reachable without the proxy, add its host to ${proxy.bypassedBy}`;

// The provider's settings come from the last `up`'s state in a refresh or destroy that does not run the program.
const credentialsRow = (status: string): FailureRow => ({
  says: `asks for credentials (${status}), and those given were missing or refused`,
  permanent: true,
  advice: (proxy) =>
    `put the proxy's user name and password in ${proxy.chosenBy} as http://user:password@host:port (percent-encoded; set dmarc:httpsProxy with --secret), or ${bypassAdvice(proxy)}. ` +
    "A password changed in dmarc:httpsProxy since the last `pulumi up` reaches a refresh or destroy only with --run-program (or after an up).",
});

const CONNECT_ANSWERS: Readonly<Record<number, FailureRow>> = {
  407: credentialsRow("407 Proxy Authentication Required"),
  // Some proxies (tinyproxy among them) answer wrong credentials with 401 rather than 407.
  401: credentialsRow("401 Unauthorized"),
  403: {
    says: "refused by its rules to connect to the service (403 Forbidden)",
    permanent: true,
    advice: (proxy) =>
      `ask the proxy's administrators to allow the service's host on port 443, or ${bypassAdvice(proxy)}.`,
  },
};

const UNREACHABLE_SERVICE: FailureRow = {
  says: "could not reach the service",
  permanent: false,
  advice: (proxy) =>
    `check that the service's address is right and that the proxy may reach it; ${bypassAdvice(proxy)}.`,
};

const PROXY_DOWN: FailureRow = {
  says: "could not be reached",
  permanent: false,
  advice: (proxy) =>
    `check that the proxy runs and that ${proxy.chosenBy} names it rightly (host and port), or ${bypassAdvice(proxy)}.`,
};

const schemeAdvice = (proxy: ProxyRoute) =>
  `check the scheme in ${proxy.chosenBy}: http:// for a proxy spoken to in plain HTTP (most are, whatever the service's scheme), https:// for one that itself speaks TLS on that port`;

const SILENT: FailureRow = {
  says: "accepted the connection but did not answer CONNECT",
  permanent: true,
  advice: (proxy) =>
    `${schemeAdvice(proxy)}; check that the port is the proxy's (not another service's); a proxy that is only slow needs a larger connectTimeoutMs. Otherwise ${bypassAdvice(proxy)}.`,
};

/** Failures of the connection to the proxy itself, by the code of its cause; any other code: PROXY_DOWN. */
const PROXY_CONNECTION_CODES: Readonly<Record<string, FailureRow>> = {
  // TLS to a proxy that answered in plain HTTP: an https:// address for an http:// proxy.
  ERR_SSL_WRONG_VERSION_NUMBER: {
    says: "answered in plain HTTP where TLS was expected (an https:// address for a plain-HTTP proxy)",
    permanent: true,
    advice: (proxy) => `${schemeAdvice(proxy)}: this one wants http://.`,
  },
  // The proxy hung up before answering: an http:// address for a proxy that speaks TLS, or a proxy in trouble.
  UND_ERR_SOCKET: {
    says: "closed the connection without answering CONNECT",
    permanent: false,
    advice: (proxy) => `${schemeAdvice(proxy)}; if it is right, the proxy may be restarting: run again.`,
  },
};

function describeRow(proxy: ProxyRoute, row: FailureRow, detail: string): ProxyFailure {
  return {
    message: `the proxy ${proxy.shown} (chosen by ${proxy.chosenBy}) ${row.says}: ${detail}`,
    permanent: row.permanent,
    advice: row.advice(proxy),
  };
}

/** A failure of the proxy's own connection: its certificate refused (a verdict of its own), else by its code. */
function connectionFailure(proxy: ProxyRoute, code: string, detail: string, trust: () => Trust): ProxyFailure {
  const holder = { name: `the proxy ${proxy.shown}`, addressedBy: proxy.chosenBy };
  const certificate = certificateFailure(code, holder, trust);
  if (certificate) {
    const message = `${certificate.says} (the proxy ${proxy.shown}'s own, chosen by ${proxy.chosenBy}): ${detail}`;
    return { message, permanent: true, advice: certificate.advice };
  }
  return describeRow(proxy, PROXY_CONNECTION_CODES[code] ?? PROXY_DOWN, detail);
}

const LEGS: {
  [Kind in ProxyLeg["kind"]]: (
    proxy: ProxyRoute,
    leg: Extract<ProxyLeg, { kind: Kind }>,
    detail: string,
    trust: () => Trust,
  ) => ProxyFailure;
} = {
  answered: (proxy, leg, detail) => describeRow(proxy, CONNECT_ANSWERS[leg.status] ?? UNREACHABLE_SERVICE, detail),
  silent: (proxy, leg) =>
    describeRow(proxy, SILENT, `no answer within ${leg.withinMs} ms (connectTimeoutMs bounds the answer to CONNECT)`),
  failed: (proxy, leg, detail, trust) => connectionFailure(proxy, leg.code, detail, trust),
};

/** A failure before the request reached the service, on `leg` of the way through `proxy`. */
export function proxyFailureOf(proxy: ProxyRoute, leg: ProxyLeg, detail: string, trust: () => Trust): ProxyFailure {
  const describe = LEGS[leg.kind] as (
    proxy: ProxyRoute,
    leg: ProxyLeg,
    detail: string,
    trust: () => Trust,
  ) => ProxyFailure;
  return describe(proxy, leg, detail, trust);
}

/** A connection through the proxy that failed after the proxy opened the tunnel: the service's side. */
export function beyondProxyFailure(proxy: ProxyRoute, detail: string): ProxyFailure {
  return describeRow(proxy, UNREACHABLE_SERVICE, detail);
}

/**
 * Advice for a connection that failed without a proxy: where a proxy was
 * meant, say how to name it (HTTP_PROXY alone does not apply to https://,
 * as with curl and Go).
 */
export function directFailureAdvice(env: NodeJS.ProcessEnv = process.env): string {
  const httpOnly = ["HTTP_PROXY", "http_proxy"].find((name) => (env[name] ?? "").trim() !== "");
  if (httpOnly !== undefined) {
    return `${httpOnly} is set, but like curl and Go the client uses it for http:// addresses only: set HTTPS_PROXY (or dmarc:httpsProxy) to reach an https:// service through that proxy.`;
  }
  return "if this machine reaches the internet only through a forward proxy, set HTTPS_PROXY (or dmarc:httpsProxy) to its address.";
}
