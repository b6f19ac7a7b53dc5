import type { ProxyRoute } from "./route";

// What a failure on the way through a forward proxy means, and what the
// reader does about it: one row per answer the proxy can give to CONNECT,
// one for not reaching the proxy at all. A refusal by the proxy's rules or
// for want of credentials is not retried: the next attempt meets the same
// rule. A proxy that is down or cannot reach the service may be back within
// the retry bounds.

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

const credentialsRow = (status: string): FailureRow => ({
  says: `asks for credentials (${status}), and those given were missing or refused`,
  permanent: true,
  advice: (proxy) =>
    `put the proxy's user name and password in ${proxy.chosenBy} as http://user:password@host:port (percent-encoded; set dmarc:httpsProxy with --secret), or ${bypassAdvice(proxy)}.`,
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

function describeRow(proxy: ProxyRoute, row: FailureRow, detail: string): ProxyFailure {
  return {
    message: `the proxy ${proxy.shown} (chosen by ${proxy.chosenBy}) ${row.says}: ${detail}`,
    permanent: row.permanent,
    advice: row.advice(proxy),
  };
}

/** A failure before the request reached the service, through `proxy`. */
export function proxyFailureOf(proxy: ProxyRoute, code: string, message: string): ProxyFailure {
  const status = /Proxy response \((\d{3})\)/.exec(message)?.[1];
  if (status !== undefined) {
    const row = CONNECT_ANSWERS[Number(status)] ?? UNREACHABLE_SERVICE;
    return describeRow(proxy, row, `it answered CONNECT with ${status}`);
  }
  return describeRow(proxy, PROXY_DOWN, code ? `${message} (${code})` : message);
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
