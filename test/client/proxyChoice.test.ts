import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer as createHttpServer, type IncomingMessage } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { connect, createServer as createNetServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type ClientOptions, closeClients, createClient, DmarcTransportError } from "../../provider/src/client";
import { directFailureAdvice } from "../../provider/src/client/proxy/failures";
import { bypasses, proxyFor } from "../../provider/src/client/proxy/route";
import { REDACTED, redact } from "../../provider/src/client/redaction";
import { makeCertificates, type TestCertificates } from "../support/certificates";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { listenOnLoopback } from "../support/loopback";
import { failure } from "./loopback";

// Which proxy a request goes through, by curl's and Go's rules, and what
// each way through it failing says: the choice without servers, then
// loopback stand-ins for a company's proxy (one that opens tunnels to an
// emulator serving https with a certificate of the test's own CA, and ones
// that answer CONNECT with a refusal, never answer it, or speak the other
// scheme). The requests through real proxies (tinyproxy, mitmproxy) are
// test/network/.

const SERVICE = new URL("https://api.dmarc.example:443");

describe("NO_PROXY", () => {
  const cases: Array<[string, string, boolean]> = [
    ["https://api.dmarc.example", "*", true],
    ["https://api.dmarc.example", "dmarc.example", true],
    ["https://dmarc.example", "dmarc.example", true],
    ["https://api.dmarc.example", ".dmarc.example", true],
    ["https://dmarc.example", ".dmarc.example", false],
    ["https://api.dmarc.example", "*.dmarc.example", true],
    ["https://notdmarc.example", "dmarc.example", false],
    ["https://API.Dmarc.Example", "api.dmarc.example", true],
    ["https://api.dmarc.example", "other.example, api.dmarc.example", true],
    ["https://api.dmarc.example", "other.example api.dmarc.example", true],
    ["https://api.dmarc.example", "api.dmarc.example:443", true],
    ["https://api.dmarc.example", "api.dmarc.example:8443", false],
    ["https://api.dmarc.example:8443", "api.dmarc.example:8443", true],
    ["https://10.20.30.40", "10.20.30.40", true],
    ["https://10.20.30.40", "10.0.0.0/8", true],
    ["https://10.20.30.40", "10.20.31.0/24", false],
    ["https://10.20.30.40", "10.20.30.40:443", true],
    ["https://10.20.30.40", "10.0.0.0/99", false],
    ["https://[fd00::5]", "fd00::/8", true],
    ["https://[fd00::5]", "[fd00::5]:443", true],
    ["https://[fd00::5]", "10.0.0.0/8", false],
    ["https://api.dmarc.example", "10.0.0.0/8", false],
    ["https://api.dmarc.example", "", false],
  ];
  it.each(cases)("%s with NO_PROXY=%j is direct: %s", (target, list, direct) => {
    expect(bypasses(new URL(target), list)).toBe(direct);
  });
});

describe("choosing the proxy", () => {
  const PROXY = "http://proxy.corp.example:3128";

  it("takes HTTPS_PROXY for an https address, upper case first as Go does", () => {
    const route = proxyFor(SERVICE, {}, { HTTPS_PROXY: PROXY, https_proxy: "http://other:1" });
    expect(route?.url.href).toBe(`${PROXY}/`);
    expect(route?.chosenBy).toBe("HTTPS_PROXY");
    expect(proxyFor(SERVICE, {}, { https_proxy: PROXY })?.chosenBy).toBe("https_proxy");
  });

  it("leaves HTTP_PROXY to http:// addresses, as curl and Go do", () => {
    expect(proxyFor(SERVICE, {}, { HTTP_PROXY: PROXY })).toBeUndefined();
    expect(directFailureAdvice({ HTTP_PROXY: PROXY })).toMatch(/HTTP_PROXY is set, .*set HTTPS_PROXY/);
    expect(directFailureAdvice({})).toMatch(/set HTTPS_PROXY \(or dmarc:httpsProxy\)/);
  });

  it("never proxies loopback, whatever the variables say", () => {
    for (const target of ["https://127.0.0.1:4010", "http://localhost:4010", "https://[::1]:4010"]) {
      expect(proxyFor(new URL(target), { httpsProxy: PROXY }, { HTTPS_PROXY: PROXY, HTTP_PROXY: PROXY })).toBe(
        undefined,
      );
    }
  });

  it("lets the settings stand in for the variables, and noProxy replace NO_PROXY", () => {
    const env = { HTTPS_PROXY: "http://env-proxy:1", NO_PROXY: "api.dmarc.example" };
    expect(proxyFor(SERVICE, {}, env)).toBeUndefined();
    const set = proxyFor(SERVICE, { httpsProxy: PROXY, noProxy: "other.example" }, env);
    expect(set?.url.host).toBe("proxy.corp.example:3128");
    expect(set?.chosenBy).toMatch(/^httpsProxy \(dmarc:httpsProxy, DMARC_HTTPS_PROXY\)$/);
    expect(set?.bypassedBy).toMatch(/^noProxy \(dmarc:noProxy/);
    expect(proxyFor(SERVICE, { noProxy: "*" }, env)).toBeUndefined();
  });

  it("takes a proxy without a scheme as http://, and shows it without its credentials", () => {
    const route = proxyFor(SERVICE, {}, { HTTPS_PROXY: "alice:s3cr3t-Pa55@proxy.corp.example:3128" });
    expect(route?.url.protocol).toBe("http:");
    expect(route?.url.password).toBe("");
    expect(route?.authorization).toBe(`Basic ${Buffer.from("alice:s3cr3t-Pa55").toString("base64")}`);
    expect(route?.shown).toBe("http://***@proxy.corp.example:3128");
  });

  it("redacts the proxy's password whatever its length, where it stands alone", () => {
    proxyFor(SERVICE, {}, { HTTPS_PROXY: "http://carol:Zq7@proxy.corp.example:3128" });
    expect(redact("http://carol:Zq7@proxy.corp.example:3128 said Zq7")).toBe(
      `http://carol:${REDACTED}@proxy.corp.example:3128 said ${REDACTED}`,
    );
    expect(redact("Zq7x and xZq7 are other words")).toBe("Zq7x and xZq7 are other words");
  });

  it("refuses an unusable proxy address, naming the variable", () => {
    expect(() => proxyFor(SERVICE, {}, { HTTPS_PROXY: "socks5://proxy:1080" })).toThrow(
      /The proxy in HTTPS_PROXY must be an http:\/\/ or https:\/\/ proxy \(got socks5:\)/,
    );
    expect(() => proxyFor(SERVICE, {}, { https_proxy: "http://proxy:3128/path" })).toThrow(/https_proxy .*no path/);
  });
});

const readText = (file: string) => readFileSync(file, "utf8");

/** A loopback server of `server`'s, closed after the file; its port. */
async function listening(server: Server, closers: Array<() => Promise<void>>): Promise<number> {
  const { url, close } = await listenOnLoopback(server);
  closers.push(close);
  return Number(new URL(url).port);
}

/** The user and password a CONNECT carried, decoded as the proxy reads them. */
const credentialsOf = (request: IncomingMessage) =>
  Buffer.from((request.headers["proxy-authorization"] ?? "").replace(/^Basic /, ""), "base64").toString("utf8");

describe("through a proxy of the company's", () => {
  const closers: Array<() => Promise<void>> = [];
  let folder: string;
  let certificates: TestCertificates;
  let service: EmulatorHandle;
  /** The proxy's address by its loopback IP, its CONNECT answers by the user name given, and the credentials seen. */
  const proxies = { http: 0, https: 0, silent: 0 };
  const seen: string[] = [];

  // A forward proxy: CONNECT opens a tunnel to the emulator, whatever host is asked for, unless the user names a status.
  function openTunnel(request: IncomingMessage, client: Socket) {
    seen.push(credentialsOf(request));
    const status = Number(/^status-(\d{3})$/.exec(credentialsOf(request).split(":")[0] ?? "")?.[1] ?? 200);
    if (status !== 200) {
      client.end(`HTTP/1.1 ${status} Refused\r\nProxy-Authenticate: Basic realm="corp"\r\n\r\n`);
      return;
    }
    const upstream = connect(Number(new URL(service.emulator.url).port), "127.0.0.1", () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      upstream.pipe(client).pipe(upstream);
    });
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
  }

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), "dmarc-proxy-loopback-"));
    certificates = makeCertificates(folder, { dns: ["api.dmarc.test"], ip: ["127.0.0.1"] });
    const tls = { cert: readText(certificates.certFile), key: readText(certificates.keyFile) };
    service = await startTestEmulator({ tls });
    closers.push(() => service.emulator.close());
    const http = createHttpServer();
    http.on("connect", openTunnel);
    const https = createHttpsServer(tls);
    https.on("connect", openTunnel);
    // Accepts the connection, reads the CONNECT, and never answers.
    const silent = createNetServer((socket) => socket.on("data", () => undefined));
    proxies.http = await listening(http, closers);
    proxies.https = await listening(https, closers);
    proxies.silent = await listening(silent, closers);
  });

  afterEach(() => closeClients());

  afterAll(async () => {
    await Promise.all(closers.map((close) => close()));
    rmSync(folder, { recursive: true, force: true });
  });

  const serviceUrl = () => `https://api.dmarc.test:${new URL(service.emulator.url).port}`;

  function list(options: Partial<ClientOptions>) {
    return createClient({
      baseUrl: serviceUrl(),
      clientId: service.partner.clientId,
      clientSecret: service.partner.clientSecret,
      caFile: certificates.caFile,
      maxAttempts: 3,
      retryBaseDelayMs: 1,
      retryMaxDelayMs: 5,
      requestsPerMinute: 0,
      ...options,
    }).listOrganizations();
  }

  async function refusal(options: Partial<ClientOptions>): Promise<DmarcTransportError> {
    const error = await failure(list(options));
    expect(error).toBeInstanceOf(DmarcTransportError);
    return error as DmarcTransportError;
  }

  it("reaches the service through an http:// and an https:// proxy, trusting the company's CA given as caFile", async () => {
    for (const proxy of [`http://127.0.0.1:${proxies.http}`, `https://127.0.0.1:${proxies.https}`]) {
      await expect(list({ httpsProxy: proxy })).resolves.toBeInstanceOf(Array);
    }
    const error = await refusal({ httpsProxy: `https://127.0.0.1:${proxies.https}`, caFile: undefined });
    expect(error.message).toMatch(/TLS certificate not trusted \(the proxy https:\/\/127\.0\.0\.1:\d+'s own/);
    expect(error.message).toMatch(/caFile \(dmarc:caFile, DMARC_CA_FILE\) \(unset\)/);
    expect(error.attempts).toBe(1);
  });

  it("sends the credentials as curl does: any percent-encoding, a literal %, a user without a password", async () => {
    const cases: Array<[string, string]> = [
      ["bob:p%40ss%3Aw0rd", "bob:p@ss:w0rd"],
      ["bob:100%-sure", "bob:100%-sure"],
      ["t%C3%B6ken", "töken:"],
    ];
    for (const [written, sent] of cases) {
      seen.length = 0;
      await list({ httpsProxy: `http://${written}@127.0.0.1:${proxies.http}` });
      expect(seen).toContain(sent);
    }
  });

  it("names the proxy's refusals by the status it answered, retrying only what can pass", async () => {
    const cases: Array<[number, RegExp, number]> = [
      [407, /asks for credentials \(407 Proxy Authentication Required\)/, 1],
      [401, /asks for credentials \(401 Unauthorized\)/, 1],
      [403, /refused by its rules to connect to the service \(403 Forbidden\)/, 1],
      [502, /could not reach the service: it answered CONNECT with 502/, 3],
    ];
    for (const [status, says, attempts] of cases) {
      const error = await refusal({ httpsProxy: `http://status-${status}:pw@127.0.0.1:${proxies.http}` });
      expect(error.message).toMatch(says);
      expect(error.message).toContain(`the proxy http://***@127.0.0.1:${proxies.http} (chosen by httpsProxy`);
      expect(error.attempts).toBe(attempts);
    }
  });

  it("bounds a proxy that accepts the connection and never answers CONNECT by connectTimeoutMs, named, not retried", async () => {
    const error = await refusal({
      httpsProxy: `http://127.0.0.1:${proxies.silent}`,
      connectTimeoutMs: 300,
      requestTimeoutMs: 60_000,
    });
    expect(error.message).toMatch(
      /the proxy http:\/\/127\.0\.0\.1:\d+ \(chosen by httpsProxy .*\) accepted the connection but did not answer CONNECT: no answer within 300 ms/,
    );
    expect(error.message).toMatch(/What to do: check the scheme in httpsProxy/);
    expect(error.attempts).toBe(1);
  });

  it("names the other scheme's mistakes: https:// for a plain proxy, http:// for a TLS one", async () => {
    const wrongVersion = await refusal({ httpsProxy: `https://127.0.0.1:${proxies.http}` });
    expect(wrongVersion.message).toMatch(
      /answered in plain HTTP where TLS was expected .*: wrong version number \(ERR_SSL_WRONG_VERSION_NUMBER\); not retried/,
    );
    expect(wrongVersion.message).toMatch(/this one wants http:\/\//);
    const hungUp = await refusal({ httpsProxy: `http://127.0.0.1:${proxies.https}` });
    expect(hungUp.message).toMatch(/closed the connection without answering CONNECT/);
    expect(hungUp.attempts).toBe(3);
  });

  it("names an https:// proxy whose certificate is for another name, not retried", async () => {
    const error = await refusal({ httpsProxy: `https://localhost:${proxies.https}` });
    expect(error.message).toMatch(
      /TLS certificate for another name \(the proxy https:\/\/localhost:\d+'s own, chosen by httpsProxy .*\(ERR_TLS_CERT_ALTNAME_INVALID\)/,
    );
    expect(error.message).toMatch(
      /address the proxy https:\/\/localhost:\d+ in httpsProxy .* by a name its certificate carries/,
    );
    expect(error.attempts).toBe(1);
  });
});
