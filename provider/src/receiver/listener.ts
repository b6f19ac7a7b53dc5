import type { IncomingMessage, ServerResponse } from "node:http";
import { readBody } from "./body";
import { createWebhookReceiver, type ReceiveResult, type ReceiverOptions } from "./receiver";
import { reject } from "./rejections";
import { respond } from "./respond";

export interface ListenerOptions extends ReceiverOptions {
  /**
   * Told when the handler throws or the store fails; the sender only sees a bare 500.
   * @defaultValue one line on stderr naming the webhook-id and the error's message
   */
  onError?: (error: unknown, context: { webhookId?: string }) => void;
}

export type RequestListener = (request: IncomingMessage, response: ServerResponse) => void;

function logError(error: unknown, context: { webhookId?: string }): void {
  const message = error instanceof Error ? error.message : String(error);
  console.error(`webhook receiver: processing ${context.webhookId ?? "a delivery"} failed: ${message}`);
}

function answer(response: ServerResponse, result: ReceiveResult): void {
  respond(response, result.status, result.outcome === "accepted" ? undefined : result.body);
}

/**
 * A node:http request listener that receives webhooks on whatever path it is mounted at.
 * The body must not have been read by anything else (no JSON body parser in front of it).
 */
export function createRequestListener(options: ListenerOptions): RequestListener {
  const receiver = createWebhookReceiver(options);
  const onError = options.onError ?? logError;

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (request.method !== "POST") {
      response.setHeader("allow", "POST");
      answer(response, reject("method_not_allowed"));
      return;
    }
    if (request.readableEnded) {
      throw new Error("the request body was already read by something mounted before the receiver (a body parser?)");
    }
    const read = await readBody(request, receiver.maxBodyBytes);
    if (read.outcome === "aborted") return;
    if (read.outcome === "too_large") {
      // The rest of the body is never read, so the connection cannot carry another request.
      response.setHeader("connection", "close");
      answer(response, reject("payload_too_large"));
      return;
    }
    const result = await receiver.receive({ body: read.body, headers: request.headers });
    answer(response, result);
    if (result.outcome === "failed") onError(result.error, { webhookId: result.webhookId });
  }

  return (request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) respond(response, 500, { error: "internal_error", message: "retry later" });
      onError(error, {});
    });
  };
}
