import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createRequestListener, type ListenerOptions } from "./listener";
import { reject } from "./rejections";
import { respond } from "./respond";

export interface ReceiverServerOptions extends ListenerOptions {
  /**
   * TCP port; 0 lets the system pick a free one, read back from `url`.
   * @defaultValue 0
   */
  port?: number;
  /**
   * Interface to listen on. Loopback by default because the service must reach the
   * receiver over HTTPS: put a TLS-terminating proxy in front, or pass "0.0.0.0" knowingly.
   * @defaultValue "127.0.0.1"
   */
  host?: string;
  /**
   * The one path that receives webhooks (query strings ignored); any other path answers 404.
   * @defaultValue "/"
   */
  path?: string;
}

export interface ReceiverServer {
  server: Server;
  /** Address to register as the webhook url (behind the TLS proxy in production). */
  url: string;
  /** Stops accepting connections and resolves once the open ones have finished. */
  close(): Promise<void>;
}

/** Starts a standalone HTTP server that receives webhooks. */
export async function createReceiverServer(options: ReceiverServerOptions): Promise<ReceiverServer> {
  const { port = 0, host = "127.0.0.1", path = "/" } = options;
  if (!path.startsWith("/")) throw new TypeError("receiver: `path` must start with /");
  const listener = createRequestListener(options);
  const server = createServer((request, response) => {
    const requestPath = (request.url ?? "").split("?", 1)[0];
    if (requestPath === path) {
      listener(request, response);
      return;
    }
    const notFound = reject("not_found");
    respond(response, notFound.status, notFound.body);
  });

  await new Promise<void>((resolve, fail) => {
    server.once("error", fail);
    server.listen(port, host, () => {
      server.off("error", fail);
      resolve();
    });
  });

  const address = server.address() as AddressInfo;
  const hostname = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    server,
    url: `http://${hostname}:${address.port}${path}`,
    close: () => new Promise((resolve, fail) => server.close((error) => (error ? fail(error) : resolve()))),
  };
}
