import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ClientOptions, closeClients, createClient, DmarcTransportError } from "../../provider/src/client";
import { projectRoot } from "../../scripts/project.mjs";
import {
  FORBIDDEN_PORT,
  INSPECTING_USERS,
  PROXY_USER,
  type ProxyNetwork,
  SERVICE_HOST,
  startProxyNetwork,
} from "../support/proxyNetwork";

// The client behind a forward proxy (test/support/proxyNetwork.ts): through
// it from a runner with no other way out, and each way it can fail, named
// with the proxy and the setting that chose it, retried only where that can
// help, and never showing the proxy's password; credentials written as curl
// takes them. (The failures no real proxy here gives, a silent proxy and the
// schemes mixed up, are test/client/proxyChoice.test.ts's.)

const NETWORK_TIMEOUT = 120_000;
const PYTHON_ENVIRONMENT_TIMEOUT = 900_000;

let network: ProxyNetwork;
beforeAll(async () => {
  network = await startProxyNetwork();
}, NETWORK_TIMEOUT);
afterAll(async () => {
  await closeClients();
  await network?.close();
}, NETWORK_TIMEOUT);

/** A proxy address of the test's proxy with other credentials (or none). */
function proxyWith(credentials: string): string {
  const url = new URL(network.proxyForHost);
  return `http://${credentials}${url.host}`;
}

async function failureOf(options: Partial<ClientOptions>): Promise<DmarcTransportError> {
  const client = createClient({
    baseUrl: network.serviceUrl,
    clientId: network.partner.clientId,
    clientSecret: network.partner.clientSecret,
    maxAttempts: 3,
    retryBaseDelayMs: 1,
    retryMaxDelayMs: 5,
    requestsPerMinute: 0,
    ...options,
  });
  const error = await client.listOrganizations().then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(DmarcTransportError);
  const failure = error as DmarcTransportError;
  expect(failure.message).not.toContain(PROXY_USER.password);
  return failure;
}

describe("a proxy that refuses", () => {
  it("without credentials: 407, named with its setting, not retried", async () => {
    const error = await failureOf({ httpsProxy: proxyWith("") });
    expect(error.message).toMatch(/the proxy http:\/\/10\.254\.\d+\.10:3128 \(chosen by httpsProxy \(dmarc:httpsProxy/);
    expect(error.message).toMatch(/asks for credentials \(407 Proxy Authentication Required\)/);
    expect(error.message).toMatch(/What to do: put the proxy's user name and password in httpsProxy/);
    expect(error.attempts).toBe(1);
  });

  it("with a wrong password: 407 (401 from tinyproxy), the password never shown", async () => {
    const error = await failureOf({ httpsProxy: proxyWith(`${PROXY_USER.name}:Wrong-Passw0rd-123@`) });
    expect(error.message).toMatch(/http:\/\/\*\*\*@10\.254\.\d+\.10:3128 .* asks for credentials \(40[17] /);
    expect(error.message).not.toContain("Wrong-Passw0rd-123");
    expect(error.attempts).toBe(1);
  });

  it("by its rules: 403 for a port it does not allow, not retried", async () => {
    const baseUrl = network.serviceUrl.replace(/:\d+$/, `:${FORBIDDEN_PORT}`);
    const error = await failureOf({ baseUrl, httpsProxy: network.proxyForHost });
    expect(error.message).toMatch(/refused by its rules to connect to the service \(403 Forbidden\)/);
    expect(error.message).toMatch(/add its host to NO_PROXY/);
    expect(error.attempts).toBe(1);
  });

  it("that is down: retried within the bounds, then named", async () => {
    const error = await failureOf({ httpsProxy: proxyWith("").replace(/:\d+$/, ":3999") });
    expect(error.message).toMatch(/the proxy http:\/\/10\.254\.\d+\.10:3999 .* could not be reached: .*ECONNREFUSED/);
    expect(error.message).toMatch(/check that the proxy runs/);
    expect(error.attempts).toBe(3);
  });

  it("with a certificate this process does not trust: says so, what it trusted, and the three ways to trust the company's CA", async () => {
    const before = network.connects().length;
    const error = await failureOf({ httpsProxy: network.proxyForHost });
    expect(network.connects().length).toBe(before + 1);
    expect(error.message).toMatch(
      /TLS certificate not trusted \(through the proxy http:\/\/\*\*\*@10\.254\.\d+\.10:3128/,
    );
    expect(error.message).toMatch(/this process trusted Node\.js's own list \(\d+ certificates\)/);
    expect(error.message).toMatch(
      /trust that CA one of three ways: install it in the operating system's store.*; or name its PEM file in caFile \(dmarc:caFile, DMARC_CA_FILE\).*; or in NODE_EXTRA_CA_CERTS/,
    );
    expect(error.attempts).toBe(1);
  });
});

/** Lists the organisations with the package's client, run in the runner's namespace: exit 0 and the count, or the error. */
function listFromRunner(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const script = `
    const { createClient } = require(${JSON.stringify(join(projectRoot, "provider", "dist", "client"))});
    createClient({ baseUrl: process.env.BASE_URL, clientId: process.env.CLIENT_ID, clientSecret: process.env.CLIENT_SECRET, caFile: process.env.CA_FILE || undefined, maxAttempts: 2, retryBaseDelayMs: 1 })
      .listOrganizations()
      .then((list) => { console.log("organizations:", list.length); process.exit(0); },
            (error) => { console.log(error.message); process.exit(1); });`;
  const [command, args] = network.inRunner(process.execPath, ["-e", script]);
  const child = spawn(command, args, {
    env: {
      PATH: process.env.PATH ?? "",
      CLIENT_ID: network.partner.clientId,
      CLIENT_SECRET: network.partner.clientSecret,
      NODE_EXTRA_CA_CERTS: network.caFile,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr.on("data", (chunk) => {
    output += chunk;
  });
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, output })));
}

describe("from a runner whose only way out is the proxy", () => {
  it(
    "reaches the service through HTTPS_PROXY, by name and by address, trusting the CA in NODE_EXTRA_CA_CERTS",
    async () => {
      for (const baseUrl of [network.serviceUrlByName, network.serviceUrl]) {
        const before = network.connects().length;
        const result = await listFromRunner({ BASE_URL: baseUrl, HTTPS_PROXY: network.proxyForRunner });
        expect(result.output).toMatch(/^organizations: \d+/);
        expect(result.code).toBe(0);
        expect(network.connects().slice(before)).toContain(new URL(baseUrl).host);
      }
    },
    NETWORK_TIMEOUT,
  );

  it(
    "goes direct to a host NO_PROXY names, and says so when that fails",
    async () => {
      const before = network.connects().length;
      const result = await listFromRunner({
        BASE_URL: network.serviceUrlByName,
        https_proxy: network.proxyForRunner,
        no_proxy: `localhost,.other.example,${SERVICE_HOST}`,
      });
      expect(result.code).toBe(1);
      expect(result.output).toMatch(/could not connect: .*ENETUNREACH/);
      expect(network.connects().length).toBe(before);
    },
    NETWORK_TIMEOUT,
  );

  it(
    "tells a runner with only HTTP_PROXY set that https:// needs HTTPS_PROXY",
    async () => {
      const result = await listFromRunner({ BASE_URL: network.serviceUrlByName, HTTP_PROXY: network.proxyForRunner });
      expect(result.code).toBe(1);
      expect(result.output).toMatch(
        /HTTP_PROXY is set, but like curl and Go the client uses it for http:\/\/ addresses only/,
      );
      expect(result.output).not.toContain(PROXY_USER.password);
    },
    NETWORK_TIMEOUT,
  );
});

describe("behind a proxy that inspects TLS, re-signing with its own CA, and asks for credentials", () => {
  let inspecting: { proxyForRunner: string; caFile: string };
  // The first run after a change of scripts/toolchains/python-requirements.txt makes the Python environment (minutes).
  beforeAll(async () => {
    inspecting = await network.startInspectingProxy();
  }, PYTHON_ENVIRONMENT_TIMEOUT);

  /** The inspecting proxy's address with `credentials` as a partner writes them. */
  const inspectingAs = (credentials: string) => inspecting.proxyForRunner.replace("http://", `http://${credentials}@`);
  const { percent, userOnly } = INSPECTING_USERS;

  it(
    "fails at once while its CA is not trusted, naming the proxy, what was trusted, and never the password",
    async () => {
      // Written as it is, not percent-encoded: curl takes a lone % as itself.
      const result = await listFromRunner({
        BASE_URL: network.serviceUrlByName,
        HTTPS_PROXY: inspectingAs(`${percent.name}:${percent.password}`),
      });
      expect(result.code).toBe(1);
      // Past the proxy's credentials: its certificate is what fails.
      expect(result.output).toMatch(
        /TLS certificate not trusted \(through the proxy http:\/\/\*\*\*@10\.254\.\d+\.5:8080, chosen by HTTPS_PROXY\)/,
      );
      expect(result.output).toMatch(/not retried/);
      expect(result.output).toMatch(
        /NODE_EXTRA_CA_CERTS \(\/\S+: \d+ certificates?\), caFile \(dmarc:caFile, DMARC_CA_FILE\) \(unset\)/,
      );
      expect(result.output).not.toContain(percent.password);
    },
    NETWORK_TIMEOUT,
  );

  it(
    "reaches the service with a literal % in the password once caFile names the proxy's CA",
    async () => {
      const result = await listFromRunner({
        BASE_URL: network.serviceUrlByName,
        HTTPS_PROXY: inspectingAs(`${percent.name}:${percent.password}`),
        CA_FILE: inspecting.caFile,
      });
      expect(result.output).toMatch(/^organizations: \d+/);
      expect(result.code).toBe(0);
    },
    NETWORK_TIMEOUT,
  );

  it(
    "reaches the service as a user with no password once NODE_EXTRA_CA_CERTS names the proxy's CA",
    async () => {
      const refused = await listFromRunner({
        BASE_URL: network.serviceUrlByName,
        HTTPS_PROXY: inspectingAs(`${userOnly.name}:not-empty`),
        NODE_EXTRA_CA_CERTS: inspecting.caFile,
      });
      expect(refused.output).toMatch(/asks for credentials \(407 Proxy Authentication Required\)/);
      const result = await listFromRunner({
        BASE_URL: network.serviceUrlByName,
        HTTPS_PROXY: inspectingAs(userOnly.name),
        NODE_EXTRA_CA_CERTS: inspecting.caFile,
      });
      expect(result.output).toMatch(/^organizations: \d+/);
      expect(result.code).toBe(0);
    },
    NETWORK_TIMEOUT,
  );
});
