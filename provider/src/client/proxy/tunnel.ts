import type { Duplex } from "node:stream";
import { type Dispatcher, Pool } from "undici";
import type { IncomingHttpHeaders } from "undici/types/header";

// The connection to a forward proxy that opens each tunnel: undici's
// ProxyAgent asks it to CONNECT. Its answer other than 200, and every
// failure on the way to the proxy, come back as a ProxyLegFault whose fields
// say which part failed (the answer's status, the cause's code), never its
// message's words. A proxy that accepts the connection and never answers
// CONNECT fails within a bound of its own, counted from the moment the
// CONNECT is written, as a connection that never opens fails within the
// connect timeout.

/** Which part of the way through the proxy failed. */
export type ProxyLeg =
  | { kind: "answered"; status: number }
  | { kind: "silent"; withinMs: number }
  | { kind: "failed"; code: string };

/** A tunnel the proxy did not open, and why, in fields. */
export class ProxyLegFault extends Error {
  override readonly name = "ProxyLegFault";

  constructor(
    readonly leg: ProxyLeg,
    message: string,
    options?: { cause: unknown },
  ) {
    super(message, options);
  }
}

const codeOf = (error: unknown): string => {
  const code = (error as { code?: unknown })?.code;
  return typeof code === "string" ? code : "";
};

/** The failure of the connection to the proxy itself: refused, timed out, its TLS. */
function failedLeg(error: unknown): ProxyLegFault {
  const code = codeOf(error);
  const text = error instanceof Error ? error.message : String(error);
  // OpenSSL's messages name its routine and source file around the reason: the reason says what happened.
  const message = /:SSL routines:[^:]*:([^:]+):/.exec(text)?.[1] ?? text;
  return new ProxyLegFault({ kind: "failed", code }, code ? `${message} (${code})` : message, { cause: error });
}

type Settle = {
  resolve: (data: Dispatcher.ConnectData<unknown>) => void;
  reject: (error: ProxyLegFault) => void;
};

/** One CONNECT: its answer, or its failure, settled once; silent for `answerWithinMs` once written, it is aborted. */
class TunnelRequest implements Dispatcher.DispatchHandler {
  private timer: NodeJS.Timeout | undefined;
  private settled = false;

  constructor(
    private readonly answerWithinMs: number,
    private readonly settle: Settle,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.timer = setTimeout(() => {
      const silent = { kind: "silent", withinMs: this.answerWithinMs } as const;
      controller.abort(new ProxyLegFault(silent, `no answer to CONNECT within ${this.answerWithinMs} ms`));
    }, this.answerWithinMs);
  }

  onRequestUpgrade(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
    socket: Duplex,
  ): void {
    this.finish(() => {
      if (statusCode === 200) {
        this.settle.resolve({ statusCode, headers, socket, opaque: null });
        return;
      }
      socket.destroy();
      const answered = { kind: "answered", status: statusCode } as const;
      this.settle.reject(new ProxyLegFault(answered, `it answered CONNECT with ${statusCode}`));
    });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.finish(() => this.settle.reject(error instanceof ProxyLegFault ? error : failedLeg(error)));
  }

  private finish(outcome: () => void): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    outcome();
  }
}

/** The proxy's connections, as ProxyAgent's `clientFactory` makes them: each CONNECT bounded, its failures in fields. */
export class ProxyTunnels extends Pool {
  constructor(
    proxy: URL,
    options: Pool.Options,
    private readonly answerWithinMs: number,
  ) {
    super(proxy, options);
  }

  override connect<TOpaque = null>(
    options: Dispatcher.ConnectOptions<TOpaque>,
  ): Promise<Dispatcher.ConnectData<TOpaque>>;
  override connect<TOpaque = null>(
    options: Dispatcher.ConnectOptions<TOpaque>,
    callback: (err: Error | null, data: Dispatcher.ConnectData<TOpaque>) => void,
  ): void;
  override connect<TOpaque = null>(
    options: Dispatcher.ConnectOptions<TOpaque>,
    callback?: (err: Error | null, data: Dispatcher.ConnectData<TOpaque>) => void,
  ): Promise<Dispatcher.ConnectData<TOpaque>> | undefined {
    const opened = new Promise<Dispatcher.ConnectData<TOpaque>>((resolve, reject) => {
      const request = new TunnelRequest(this.answerWithinMs, {
        resolve: (data) => resolve({ ...data, opaque: options.opaque ?? (null as TOpaque) }),
        reject,
      });
      try {
        this.dispatch({ ...options, method: "CONNECT" }, request);
      } catch (error) {
        reject(failedLeg(error));
      }
    });
    if (callback === undefined) return opened;
    opened.then(
      (data) => callback(null, data),
      (error: Error) => callback(error, { opaque: options.opaque } as Dispatcher.ConnectData<TOpaque>),
    );
    return undefined;
  }
}
