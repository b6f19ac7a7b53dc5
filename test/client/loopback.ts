import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { listenOnLoopback } from "../support/loopback";

// A tiny HTTP server on 127.0.0.1 for client tests that need an answer the
// emulator would never give (redirects, HTML pages, cut-off bodies, ...).

export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
}

export type Handler = (request: SeenRequest, response: ServerResponse, socket: Socket) => void;

export interface Loopback {
  url: string;
  seen: SeenRequest[];
  close(): Promise<void>;
}

export async function startLoopback(handler: Handler): Promise<Loopback> {
  const seen: SeenRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const entry = {
        method: request.method ?? "",
        path: request.url ?? "",
        headers: request.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      seen.push(entry);
      handler(entry, response, request.socket);
    });
  });
  const { url, close } = await listenOnLoopback(server);
  return {
    url,
    seen,
    close,
  };
}

/** The error a call fails with; the test fails when the call succeeds. */
export async function failure(pending: Promise<unknown>): Promise<Error> {
  try {
    await pending;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected the call to fail");
}

export function json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  response.end(text);
}

export const ORGANIZATION = {
  id: "org_0123456789abcdef01234567",
  name: "Acme",
  createdAt: "2024-01-01T00:00:00.000Z",
  updatedAt: "2024-01-01T00:00:00.000Z",
};

export function tokenAnswer(response: ServerResponse, token: string, expiresIn = 300) {
  json(response, 200, { access_token: token, token_type: "Bearer", expires_in: expiresIn });
}

// A self-signed certificate for 127.0.0.1 (valid until 2126), generated for
// these tests only: no client trusts it, which is the point.
export const UNTRUSTED_TLS = {
  key: `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgP5xgOAIBhlpbF2Zu
A+RpwAfEqOusFsK3az9L+MdpdT+hRANCAARxGsHZQlswCY/DzKGb5VFWEaV7Fj4h
VaaSq0Mczm9K4KTVJtPWdxXC98zIMN15+5yQOMEangizdevbO111dPb2
-----END PRIVATE KEY-----
`,
  cert: `-----BEGIN CERTIFICATE-----
MIIBkDCCATagAwIBAgIUNr8XI8aCeQscnj1wcCD59T9LlOswCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJMTI3LjAuMC4xMCAXDTI2MTEyMjA0MTUwOVoYDzIxMjYxMDI5
MDQxNTA5WjAUMRIwEAYDVQQDDAkxMjcuMC4wLjEwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAARxGsHZQlswCY/DzKGb5VFWEaV7Fj4hVaaSq0Mczm9K4KTVJtPWdxXC
98zIMN15+5yQOMEangizdevbO111dPb2o2QwYjAdBgNVHQ4EFgQUzZ1vTXCG2M6D
7H5mym6Nq+HUFMEwHwYDVR0jBBgwFoAUzZ1vTXCG2M6D7H5mym6Nq+HUFMEwDwYD
VR0TAQH/BAUwAwEB/zAPBgNVHREECDAGhwR/AAABMAoGCCqGSM49BAMCA0gAMEUC
IQDN4R1ApQrxoQRm4v9obGYvCbS3128ycoltVuseB3JNZAIgJLXYYyro3gCe200n
PhLvCQb5RtGPJG1SclT6Lx2WJPA=
-----END CERTIFICATE-----
`,
};
