import { createServer, type RequestListener as NodeListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Fastify from "fastify";
import { createRequestListener, createWebhookReceiver, type WebhookEvent } from "pulumi-dmarc-partner/receiver";
import { afterEach, describe, expect, it } from "vitest";
import { events, newSecret, post, sign } from "./helpers";

const body = JSON.stringify(events["report.received"]);
const servers: Server[] = [];

async function serve(listener: NodeListener): Promise<string> {
  const server = createServer(listener);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

describe("mounting in a partner's own server", () => {
  it("runs inside a node:http server next to the partner's other routes", async () => {
    const secret = newSecret();
    const handled: WebhookEvent[] = [];
    const webhooks = createRequestListener({ secret, onEvent: (event) => void handled.push(event) });
    const url = await serve((request, response) => {
      if (request.url === "/webhooks/dmarc") return webhooks(request, response);
      response.writeHead(200).end("partner app");
    });
    const request = sign(secret, body);
    expect((await post(`${url}/webhooks/dmarc`, request)).status).toBe(204);
    expect((await post(`${url}/webhooks/dmarc`, request)).status).toBe(200);
    expect((await fetch(`${url}/`)).status).toBe(200);
    expect(handled).toEqual([events["report.received"]]);
  });

  it("answers 500 and says why when a body parser read the body first", async () => {
    const secret = newSecret();
    const errors: string[] = [];
    const webhooks = createRequestListener({
      secret,
      onEvent: () => {},
      onError: (error) => errors.push((error as Error).message),
    });
    const url = await serve(async (request, response) => {
      for await (const _chunk of request);
      webhooks(request, response);
    });
    const answer = await post(url, sign(secret, body));
    expect(answer.status).toBe(500);
    expect(errors).toEqual([expect.stringContaining("body parser")]);
  });

  it("runs inside Fastify through createWebhookReceiver", async () => {
    const secret = newSecret();
    const handled: WebhookEvent[] = [];
    const receiver = createWebhookReceiver({ secret, onEvent: (event) => void handled.push(event) });
    const app = Fastify();
    await app.register(async (scope) => {
      // The signature covers the bytes as sent, so this scope keeps bodies raw.
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: receiver.maxBodyBytes }, (_request, raw, done) =>
        done(null, raw),
      );
      scope.post("/webhooks/dmarc", async (request, reply) => {
        const result = await receiver.receive({ body: request.body as Buffer, headers: request.headers });
        if (result.outcome === "failed") request.log.error(result.error);
        return reply.code(result.status).send("body" in result ? result.body : undefined);
      });
    });
    const url = await app.listen({ port: 0, host: "127.0.0.1" });
    try {
      const request = sign(secret, body);
      expect((await post(`${url}/webhooks/dmarc`, request)).status).toBe(204);
      expect((await post(`${url}/webhooks/dmarc`, request)).status).toBe(200);
      const forged = await post(`${url}/webhooks/dmarc`, sign(newSecret(), body));
      expect(forged.status).toBe(401);
      expect(JSON.parse(forged.text).error).toBe("invalid_signature");
      const huge = await post(`${url}/webhooks/dmarc`, sign(secret, "x".repeat(receiver.maxBodyBytes + 1)));
      expect(huge.status).toBe(413);
      expect(handled).toEqual([events["report.received"]]);
    } finally {
      await app.close();
    }
  });
});
