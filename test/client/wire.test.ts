import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ClientOptions,
  closeClients,
  createClient,
  DmarcApiError,
  DmarcResponseError,
  DmarcTransportError,
  OutcomeUnknownError,
} from "../../provider/src/client";
import { freePort } from "../support/loopback";
import { failure, json, type Loopback, ORGANIZATION, startLoopback, tokenAnswer, UNTRUSTED_TLS } from "./loopback";

// The client against small loopback servers that misbehave on purpose.

const servers: Loopback[] = [];
afterEach(async () => {
  await closeClients();
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function serve(handler: Parameters<typeof startLoopback>[0]): Promise<Loopback> {
  const server = await startLoopback(handler);
  servers.push(server);
  return server;
}

function apiServer(answer: Parameters<typeof startLoopback>[0]) {
  return serve((request, response, socket) => {
    if (request.path === "/auth/token") return tokenAnswer(response, "tok-I-12345678");
    answer(request, response, socket);
  });
}

const SECRET = "client-secret-Zq81vX0pLm";

function clientFor(server: Loopback, options: Partial<ClientOptions> = {}) {
  return createClient({
    baseUrl: server.url,
    clientId: "partner-1",
    clientSecret: SECRET,
    maxAttempts: 3,
    retryBaseDelayMs: 1,
    retryMaxDelayMs: 5,
    requestTimeoutMs: 2_000,
    ...options,
  });
}

const tokenCalls = (server: Loopback) => server.seen.filter((request) => request.path === "/auth/token").length;
const apiCalls = (server: Loopback) => server.seen.filter((request) => request.path.startsWith("/v1/")).length;

describe("tokens", () => {
  it("exchanges the client credentials once for concurrent callers, form encoded", async () => {
    const server = await serve((request, response) => {
      if (request.path === "/auth/token") return void setTimeout(() => tokenAnswer(response, "tok-A-1234567"), 20);
      if (request.headers.authorization === "Bearer tok-A-1234567") return json(response, 200, ORGANIZATION);
      json(response, 401, { error: "AuthenticationError", message: "bad token" });
    });
    const client = clientFor(server);
    const results = await Promise.all(Array.from({ length: 10 }, () => client.getOrganization(ORGANIZATION.id)));
    expect(results.every((organization) => organization?.id === ORGANIZATION.id)).toBe(true);
    expect(tokenCalls(server)).toBe(1);
    const tokenRequest = server.seen.find((request) => request.path === "/auth/token");
    expect(tokenRequest?.method).toBe("POST");
    expect(tokenRequest?.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    expect(Object.fromEntries(new URLSearchParams(tokenRequest?.body))).toEqual({
      grant_type: "client_credentials",
      client_id: "partner-1",
      client_secret: SECRET,
    });
  });

  it("renews a refused token once, shared by the callers it was refused to", async () => {
    let issued = 0;
    const server = await serve((request, response) => {
      if (request.path === "/auth/token") return tokenAnswer(response, `tok-B-${++issued}-abcdef`);
      if (request.headers.authorization === `Bearer tok-B-${issued}-abcdef` && issued > 1) {
        return json(response, 200, ORGANIZATION);
      }
      json(response, 401, { error: "AuthenticationError", message: "token expired" });
    });
    const client = clientFor(server);
    const results = await Promise.all(Array.from({ length: 6 }, () => client.getOrganization(ORGANIZATION.id)));
    expect(results.every((organization) => organization?.id === ORGANIZATION.id)).toBe(true);
    expect(tokenCalls(server)).toBe(2);
  });

  it("renews a token that has reached its renewal time before using it", async () => {
    let issued = 0;
    const server = await serve((request, response) => {
      if (request.path === "/auth/token") return tokenAnswer(response, `tok-C-${++issued}-abcdef`, 0.002);
      json(response, 200, ORGANIZATION);
    });
    const client = clientFor(server, { tokenRenewMarginSeconds: 60 });
    await client.getOrganization(ORGANIZATION.id);
    await sleep(5);
    await client.getOrganization(ORGANIZATION.id);
    expect(tokenCalls(server)).toBe(2);
    expect(
      server.seen.filter((request) => request.path.startsWith("/v1/")).map((r) => r.headers.authorization),
    ).toEqual(["Bearer tok-C-1-abcdef", "Bearer tok-C-2-abcdef"]);
  });

  it("reports a token refused twice, with what to check", async () => {
    const server = await serve((request, response) => {
      if (request.path === "/auth/token") return tokenAnswer(response, "tok-D-12345678");
      json(response, 401, { error: "AuthenticationError", message: "token refused", traceId: "trace-401" });
    });
    const error = await failure(clientFor(server).getOrganization(ORGANIZATION.id));
    expect(error).toBeInstanceOf(DmarcApiError);
    expect((error as DmarcApiError).status).toBe(401);
    expect(error.message).toContain("read organization failed: GET /v1/organizations/");
    expect(error.message).toContain("clientId and clientSecret");
    expect(tokenCalls(server)).toBe(2);
    expect(apiCalls(server)).toBe(2);
  });

  it("does not try to renew a static token", async () => {
    const server = await serve((_request, response) =>
      json(response, 401, { error: "AuthenticationError", message: "no" }),
    );
    const client = createClient({ baseUrl: server.url, accessToken: "static-token-987654" });
    const error = await failure(client.listPlans());
    expect((error as DmarcApiError).status).toBe(401);
    expect(server.seen).toHaveLength(1);
    expect(error.message).not.toContain("static-token-987654");
  });

  it("follows a 302 or 307 on the token call to the same address, keeping POST and the body", async () => {
    for (const status of [302, 307]) {
      const server = await serve((request, response) => {
        if (request.path === "/auth/token") {
          response.writeHead(status, { location: "/oauth2/token" });
          return void response.end();
        }
        if (request.path === "/oauth2/token" && request.method === "POST" && request.body.includes("client_secret=")) {
          return tokenAnswer(response, "tok-E-12345678");
        }
        if (request.headers.authorization === "Bearer tok-E-12345678") return json(response, 200, []);
        json(response, 400, { error: "ValidationError", message: `unexpected ${request.method} ${request.path}` });
      });
      await expect(clientFor(server).listPlans()).resolves.toEqual([]);
      expect(server.seen.map((request) => `${request.method} ${request.path}`)).toEqual([
        "POST /auth/token",
        "POST /oauth2/token",
        "GET /v1/partners/plans",
      ]);
    }
  });

  it("never sends the client secret to another host a token redirect points at", async () => {
    const elsewhere = await serve((_request, response) => tokenAnswer(response, "tok-F-12345678"));
    const server = await serve((_request, response) => {
      response.writeHead(307, { location: `${elsewhere.url}/auth/token` });
      response.end();
    });
    const error = await failure(clientFor(server).listPlans());
    expect(error).toBeInstanceOf(DmarcResponseError);
    expect(error.message).toContain("obtain an access token failed");
    expect(error.message).toContain("another address");
    expect(error.message).not.toContain(SECRET);
    expect(elsewhere.seen).toHaveLength(0);
  });
});

describe("transport rules", () => {
  it("never forwards the bearer token across a redirect to another host", async () => {
    const elsewhere = await serve((_request, response) => json(response, 200, ORGANIZATION));
    const server = await serve((request, response) => {
      if (request.path === "/auth/token") return tokenAnswer(response, "tok-G-12345678");
      response.writeHead(302, { location: `${elsewhere.url}${request.path}` });
      response.end();
    });
    const error = await failure(clientFor(server).getOrganization(ORGANIZATION.id));
    expect(error).toBeInstanceOf(DmarcResponseError);
    expect(error.message).toContain(`set baseUrl to it`);
    expect(elsewhere.seen).toHaveLength(0);
  });

  it("refuses an untrusted certificate at once, before sending anything, until caFile names its CA", async () => {
    let requests = 0;
    const server = createHttpsServer(UNTRUSTED_TLS, (_request, response) => {
      requests += 1;
      json(response, 200, ORGANIZATION);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const folder = mkdtempSync(join(tmpdir(), "dmarc-ca-file-"));
    try {
      const { port } = server.address() as AddressInfo;
      const options = { baseUrl: `https://127.0.0.1:${port}`, accessToken: "static-token-135790" };
      const error = await failure(createClient(options).createOrganization({ name: "Acme" }));
      expect(error).toBeInstanceOf(DmarcTransportError);
      expect(error.message).toContain("TLS certificate not trusted");
      expect(error.message).toContain("not retried");
      expect(error.message).toMatch(
        /this process trusted Node\.js's own list \(\d+ certificates\), the operating system's store/,
      );
      expect(error.message).toMatch(/caFile \(dmarc:caFile, DMARC_CA_FILE\)/);
      expect(requests).toBe(0);
      const caFile = join(folder, "company-ca.pem");
      expect(() => createClient({ ...options, caFile })).toThrow(/caFile cannot be read \(ENOENT\)/);
      writeFileSync(caFile, "not a certificate");
      expect(() => createClient({ ...options, caFile })).toThrow(/caFile holds no PEM certificate/);
      writeFileSync(caFile, UNTRUSTED_TLS.cert);
      await expect(createClient({ ...options, caFile }).getOrganization(ORGANIZATION.id)).resolves.toMatchObject({
        name: ORGANIZATION.name,
      });
      expect(requests).toBe(1);
    } finally {
      rmSync(folder, { recursive: true, force: true });
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("stops following a redirect loop", async () => {
    const server = await serve((request, response) => {
      response.writeHead(307, { location: request.path });
      response.end();
    });
    const error = await failure(createClient({ baseUrl: server.url, accessToken: "static-token-246802" }).listPlans());
    expect(error).toBeInstanceOf(DmarcResponseError);
    expect(error.message).toContain("answered 307 with redirect after redirect (5 followed)");
    expect(server.seen).toHaveLength(6);
  });

  it("follows a same-address redirect of an API call with the token", async () => {
    const server = await serve((request, response) => {
      if (request.path === "/auth/token") return tokenAnswer(response, "tok-H-12345678");
      if (request.path.startsWith("/v1/organizations/")) {
        response.writeHead(308, { location: `/v2${request.path.slice(3)}` });
        return void response.end();
      }
      if (request.headers.authorization === "Bearer tok-H-12345678") return json(response, 200, ORGANIZATION);
      json(response, 401, { error: "AuthenticationError", message: "no" });
    });
    await expect(clientFor(server).getOrganization(ORGANIZATION.id)).resolves.toMatchObject({ id: ORGANIZATION.id });
  });
});

describe("answers that are not what they should be", () => {
  it("reports an HTML page instead of JSON", async () => {
    const server = await apiServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/html" });
      response.end("<html><head><title>Welcome to nginx!</title></head><body>hi</body></html>");
    });
    const error = await failure(clientFor(server).getOrganization(ORGANIZATION.id));
    expect(error).toBeInstanceOf(DmarcResponseError);
    expect(error.message).toContain('an HTML page ("Welcome to nginx!") instead of JSON');
    expect(error.message).toContain("baseUrl");
  });

  it("does not take a 404 page without the service's code for a missing object", async () => {
    const server = await apiServer((_request, response) => {
      response.writeHead(404, { "content-type": "text/html" });
      response.end("<html><title>404 Not Found</title></html>");
    });
    const error = await failure(clientFor(server).getOrganization(ORGANIZATION.id));
    expect(error).toBeInstanceOf(DmarcApiError);
    expect(error.message).toContain("the route itself may not exist");
  });

  it("answers undefined and false for the service's own not-found", async () => {
    const server = await apiServer((_request, response) =>
      json(response, 404, { error: "ResourceNotFound", message: "no such thing", details: { resourceId: "x" } }),
    );
    const client = clientFor(server);
    await expect(client.getOrganization("org_x")).resolves.toBeUndefined();
    await expect(client.getDomain("org_x", "example.com")).resolves.toBeUndefined();
    await expect(client.deleteWebhook("wh_x")).resolves.toBe(false);
    await expect(client.deleteOrganization("org_x")).resolves.toBe(false);
  });

  it("reports cut-off JSON that ends cleanly", async () => {
    const server = await apiServer((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end('{"id": "org_1", "na');
    });
    const error = await failure(clientFor(server).getOrganization(ORGANIZATION.id));
    expect(error).toBeInstanceOf(DmarcResponseError);
    expect(error.message).toContain("JSON that is not complete");
  });

  it("retries a read whose body was cut off by a closed connection, then gives up within the bound", async () => {
    const server = await apiServer((_request, response, socket) => {
      response.writeHead(200, { "content-type": "application/json", "content-length": "500" });
      response.write('{"id": "org_1", ');
      setImmediate(() => socket.destroy());
    });
    const error = await failure(clientFor(server).getOrganization(ORGANIZATION.id));
    expect(error).toBeInstanceOf(DmarcTransportError);
    expect((error as DmarcTransportError).attempts).toBe(3);
    expect(error.message).toContain("gave up after 3 attempts");
    expect(apiCalls(server)).toBe(3);
  });

  it("refuses a huge body, announced or not, without hanging", async () => {
    const megabyte = Buffer.alloc(1024 * 1024, 0x20);
    for (const announced of [true, false]) {
      const server = await apiServer((_request, response) => {
        response.writeHead(200, {
          "content-type": "application/json",
          ...(announced ? { "content-length": String(6 * megabyte.length) } : {}),
        });
        for (let index = 0; index < 6; index++) response.write(megabyte);
        response.end();
      });
      const error = await failure(clientFor(server).listPlans());
      expect(error).toBeInstanceOf(DmarcResponseError);
      expect(error.message).toContain("larger than 5242880 bytes");
      expect(apiCalls(server)).toBe(1);
    }
  });

  it("names the fields an answer lacks and tolerates unknown ones", async () => {
    const server = await apiServer((request, response) => {
      if (request.path.includes("org_ok")) return json(response, 200, { ...ORGANIZATION, extra: { nested: true } });
      json(response, 200, { name: "Acme", createdAt: 5 });
    });
    const client = clientFor(server);
    await expect(client.getOrganization("org_ok")).resolves.toEqual(ORGANIZATION);
    const error = await failure(client.getOrganization("org_bad"));
    expect(error).toBeInstanceOf(DmarcResponseError);
    expect(error.message).toMatch(/does not match the expected shape \(id: .*; createdAt: .*; updatedAt: /);
  });

  it("says what was done, what the service said and what to do", async () => {
    const server = await apiServer((_request, response) =>
      json(response, 422, {
        error: "ValidationError",
        message: "Request validation failed",
        details: { invalidFields: [{ field: "name", message: "must not be empty" }] },
        traceId: "trace-422",
      }),
    );
    const error = (await failure(clientFor(server).createOrganization({ name: "" }))) as DmarcApiError;
    expect(error).toBeInstanceOf(DmarcApiError);
    expect(error).toMatchObject({
      status: 422,
      code: "ValidationError",
      serviceMessage: "Request validation failed",
      invalidFields: [{ field: "name", message: "must not be empty" }],
      traceId: "trace-422",
      method: "POST",
      path: "/v1/organizations",
      operation: "create organization",
    });
    expect(error.message.split("\n")).toEqual([
      "create organization failed: POST /v1/organizations answered 422 ValidationError: Request validation failed (traceId trace-422)",
      "  - name: must not be empty",
      "What to do: correct the values listed above and run again.",
    ]);
  });
});

describe("faults", () => {
  const fastFail = { connectTimeoutMs: 500, maxAttempts: 3 };

  it("retries a create that provably never left (connection refused), then gives up with the count", async () => {
    const port = await freePort();
    const client = createClient({
      baseUrl: `http://127.0.0.1:${port}`,
      accessToken: "static-token-123456",
      retryBaseDelayMs: 1,
      retryMaxDelayMs: 5,
      ...fastFail,
    });
    const error = await failure(client.createOrganization({ name: "Acme" }));
    expect(error).toBeInstanceOf(DmarcTransportError);
    expect((error as DmarcTransportError).attempts).toBe(3);
    expect(error.message).toContain("could not connect");
    expect(error.message).toContain(`http://127.0.0.1:${port} is the right baseUrl`);
  });

  it("reports a create whose connection dropped after sending as outcome unknown, sent once", async () => {
    const server = await apiServer((_request, _response, socket) => socket.destroy());
    const error = await failure(clientFor(server).createOrganization({ name: "Acme" }));
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error.message).toContain("create organization: POST /v1/organizations was sent, but no answer came back");
    expect(apiCalls(server)).toBe(1);
  });

  it("reports a create that timed out after sending as outcome unknown, sent once", async () => {
    const server = await apiServer(() => {});
    const error = await failure(
      clientFor(server, { requestTimeoutMs: 150 }).assignSubscription({ organizationId: "o", priceId: "p" }),
    );
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error.message).toContain("no complete answer within 150 ms");
    expect(apiCalls(server)).toBe(1);
  });

  it("retries reads after dropped connections and timeouts", async () => {
    let calls = 0;
    const server = await apiServer((_request, response, socket) => {
      calls += 1;
      if (calls === 1) return void socket.destroy();
      if (calls === 2) return;
      json(response, 200, ORGANIZATION);
    });
    await expect(clientFor(server, { requestTimeoutMs: 150 }).getOrganization("org_1")).resolves.toMatchObject(
      ORGANIZATION,
    );
    expect(apiCalls(server)).toBe(3);
  });

  it("retries a create on 429 and 502, honouring the wait the service asked for", async () => {
    let calls = 0;
    const server = await apiServer((_request, response) => {
      calls += 1;
      if (calls === 1) {
        return json(response, 429, {
          error: "RateLimitExceeded",
          message: "slow down",
          details: { limit: 60, period: "1m", retryAfterSeconds: 0.2 },
        });
      }
      if (calls === 2) return json(response, 502, { error: "InternalServerError", message: "bad gateway" });
      json(response, 201, ORGANIZATION);
    });
    const lines: string[] = [];
    await expect(
      clientFor(server, { log: (line) => lines.push(line) }).createOrganization({ name: "Acme" }),
    ).resolves.toEqual(ORGANIZATION);
    expect(apiCalls(server)).toBe(3);
    const waits = lines.flatMap((line) => /in (\d+)ms after status (\d+)/.exec(line)?.slice(1, 3) ?? []);
    expect(waits[1]).toBe("429");
    expect(Number(waits[0])).toBeGreaterThanOrEqual(200);
    expect(waits[3]).toBe("502");
  });

  it("does not repeat a create answered 500, but repeats a read", async () => {
    const server = await apiServer((_request, response) =>
      json(response, 500, { error: "InternalServerError", message: "boom", traceId: "t-500" }),
    );
    const client = clientFor(server);
    const create = await failure(client.createDomainGroup({ organizationId: "o", name: "g" }));
    expect((create as DmarcApiError).status).toBe(500);
    expect(apiCalls(server)).toBe(1);
    const read = await failure(client.getDomainGroup("o", "g"));
    expect(read.message).toContain("(after 3 attempts over");
    expect(read.message).toContain("What to do: the service is failing");
    expect(apiCalls(server)).toBe(4);
  });
});

describe("routes", () => {
  it("pages through a list transparently", async () => {
    const organizations = Array.from({ length: 250 }, (_, index) => ({ ...ORGANIZATION, id: `org_${index}` }));
    const server = await serve((request, response) => {
      if (request.path === "/auth/token") return tokenAnswer(response, "tok-J-12345678");
      const query = new URL(request.path, "http://x").searchParams;
      const page = Number(query.get("page"));
      const limit = Number(query.get("limit"));
      const pageCount = Math.ceil(organizations.length / limit);
      json(response, 200, {
        data: organizations.slice((page - 1) * limit, page * limit),
        meta: { total: 250, limit, page, pageCount, hasPreviousPage: page > 1, hasNextPage: page < pageCount },
      });
    });
    const listed = await clientFor(server).listOrganizations();
    expect(listed.map((organization) => organization.id)).toEqual(organizations.map((organization) => organization.id));
    expect(apiCalls(server)).toBe(3);
  });

  it("builds paths and queries as the service expects, with no query the description leaves out", async () => {
    const group = { id: "dmngrp_1", name: "g" };
    const domain = { domain: "example.com", type: "sending", policy: "none", domainVerified: false };
    const user = { id: "u1", email: "admin@example.com", emailVerified: true };
    const server = await serve((request, response) => {
      if (request.path === "/auth/token") return tokenAnswer(response, "tok-K-12345678");
      if (request.path.startsWith("/v1/domain-groups")) return json(response, 200, group);
      if (request.path.startsWith("/v1/domains")) return json(response, 200, domain);
      if (request.path.startsWith("/v1/users")) return json(response, 200, user);
      json(response, 200, [
        {
          objectId: "wh_1",
          name: "n",
          ownerId: "p",
          url: "https://x",
          events: [],
          active: true,
          createdAt: "t",
          updatedAt: "t",
        },
      ]);
    });
    const client = clientFor(server);
    await client.updateDomainGroup("org 1", "dmngrp_1", { name: "g" });
    await client.updateDomain("org_1", "example.com", { type: "parked" });
    await client.getUser("org_1", "admin@example.com");
    await client.listWebhooks("partner/1");
    expect(server.seen.slice(1).map((request) => `${request.method} ${request.path} ${request.body}`)).toEqual([
      'PUT /v1/domain-groups/dmngrp_1 {"name":"g"}',
      'PATCH /v1/domains/example.com {"type":"parked"}',
      "GET /v1/users/admin%40example.com?organizationId=org_1 ",
      "GET /v1/webhooks/owner/partner%2F1 ",
    ]);
  });
});

describe("secrets", () => {
  it("keeps tokens, client secrets, webhook secrets and magic links out of messages and logs", async () => {
    const webhookSecret = "whsec_c2VjcmV0LXZhbHVlLWZvci10ZXN0cw";
    const magicLink = "https://app.example.com/signin/ml_8f3a9c2b7d6e5f40";
    const server = await serve((request, response) => {
      if (request.path === "/auth/token") return tokenAnswer(response, "tok-L-secret-9876");
      const webhook = {
        objectId: "wh_1",
        name: "n",
        ownerId: "p",
        url: "https://x",
        events: [],
        active: true,
        createdAt: "t",
        updatedAt: "t",
      };
      if (request.path === "/v1/webhooks") return json(response, 201, { ...webhook, secret: webhookSecret });
      if (request.path === "/auth/magic-link") return json(response, 200, { url: magicLink, expiringAt: "t" });
      // A hostile service quoting everything it knows back in its error.
      json(response, 400, {
        error: "ValidationError",
        message: `bad: ${request.headers.authorization} ${SECRET} ${webhookSecret} ${magicLink}`,
        details: { invalidFields: [{ field: "x", message: `token=${request.headers.authorization?.slice(7)}` }] },
      });
    });
    const lines: string[] = [];
    const client = clientFor(server, { log: (line) => lines.push(line) });
    await client.createWebhook({ name: "n", ownerId: "p", url: "https://x.example.com", events: ["domain.created"] });
    await client.createMagicLink({
      userId: "a@example.com",
      organizationId: "o",
      redirectUri: "https://x.example.com",
    });
    const error = (await failure(client.getOrganization("org_1"))) as DmarcApiError;
    const everything = [error.message, error.serviceMessage, JSON.stringify(error.details), ...lines].join("\n");
    expect(lines.length).toBeGreaterThan(3);
    for (const secret of [
      "tok-L-secret-9876",
      SECRET,
      webhookSecret,
      magicLink,
      "c2VjcmV0LXZhbHVl",
      "ml_8f3a9c2b7d6e5f40",
    ]) {
      expect(everything).not.toContain(secret);
    }
  });
});
