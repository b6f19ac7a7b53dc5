import type { FastifyReply, FastifyRequest } from "fastify";
import type { Context } from "../context";
import type { FaultDecision } from "../faults";
import type { RequestLog } from "../requestLog";
import { partnerOf } from "../router";
import { pathOf } from "./paths";

/** Per-request bookkeeping of an API request (control-plane requests have none). */
interface Exchange {
  startedAt: number;
  dropAfterProcessing: boolean;
  processingMs: number;
}

type Dropped = "before-processing" | "after-processing";

function answerOf(payload: unknown): unknown {
  if (typeof payload !== "string" || payload === "") return null;
  try {
    return JSON.parse(payload);
  } catch {
    return payload;
  }
}

/** Stats, the request log and dropped connections: what the emulator keeps of each API exchange. */
export class Bookkeeping {
  private readonly exchanges = new WeakMap<FastifyRequest, Exchange>();

  constructor(
    private readonly ctx: Context,
    private readonly requestLog: RequestLog | undefined,
  ) {}

  /** Starts the exchange of an API request; stats count it under its route pattern, if any. */
  begin(request: FastifyRequest, pattern: string | undefined): void {
    this.exchanges.set(request, { startedAt: Date.now(), dropAfterProcessing: false, processingMs: 0 });
    this.ctx.stats.request(pattern);
  }

  /** Notes the fault decided for the exchange: how long its processing takes, and whether its answer is dropped after. */
  decided(request: FastifyRequest, decision: FaultDecision): void {
    const exchange = this.exchanges.get(request);
    if (!exchange) return;
    exchange.dropAfterProcessing = decision.dropAfterProcessing;
    exchange.processingMs = decision.processingMs;
  }

  /** How long the exchange's processing is held once the request is received (`processingMs` of its faults). */
  processingMs(request: FastifyRequest): number {
    return this.exchanges.get(request)?.processingMs ?? 0;
  }

  /** Drops the connection before the request is processed. */
  dropBeforeProcessing(request: FastifyRequest, reply: FastifyReply): FastifyReply {
    this.record(request, null, null, "before-processing");
    this.ctx.stats.dropped();
    reply.hijack();
    request.raw.socket?.destroy();
    return reply;
  }

  rateLimited(): void {
    this.ctx.stats.rateLimited();
  }

  /** Records the answer, or drops the connection once the operation happened if the fault said so. */
  readonly onSend = async (request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> => {
    if (request.method !== "GET") this.ctx.store.changed();
    const exchange = this.exchanges.get(request);
    if (!exchange) return payload;
    if (exchange.dropAfterProcessing) {
      // The operation happened; the caller never learns it did.
      this.record(request, reply.statusCode, answerOf(payload), "after-processing");
      this.ctx.stats.dropped();
      request.raw.socket?.destroy();
    } else {
      this.record(request, reply.statusCode, answerOf(payload));
      this.ctx.stats.answered(reply.statusCode);
    }
    return payload;
  };

  private record(request: FastifyRequest, status: number | null, response: unknown, dropped?: Dropped): void {
    const exchange = this.exchanges.get(request);
    if (!exchange || !this.requestLog) return;
    this.requestLog.write({
      time: new Date(exchange.startedAt).toISOString(),
      method: request.method,
      path: pathOf(request),
      query: request.query ?? {},
      body: request.body ?? null,
      status,
      response,
      partnerId: partnerOf(request)?.id ?? null,
      traceId: String(request.id),
      durationMs: Date.now() - exchange.startedAt,
      ...(dropped ? { dropped } : {}),
    });
  }
}
