import { Agent, request } from "node:http";
import type { TurnSource } from "./turns";

// Turns taken from a pacer that several processes share (a fleet runner's):
// one POST per request, answered when the request's turn comes. The pacer
// sees a process go away as its connections closing, so a process that dies
// while it waits takes no turn from the others.

/** The pacer's route for a turn; the answer is {@link TurnAnswer}. */
export const TURN_PATH = "/turn";
/** The pacer's route for news of a 429, which slows every process taking turns from it. */
export const REFUSED_PATH = "/refused";

/** What the pacer answers with a turn: its pace and how many turns wait after this one. */
export interface TurnAnswer {
  perMinute: number;
  waiting: number;
}

/** Where a shared pacer is and the token that lets a process take turns from it. */
export interface PacerAddress {
  /** `http://127.0.0.1:<port>`: a pacer is reached on this machine only. */
  url: string;
  token: string;
}

/** A pacer that cannot be reached or refuses: the process goes back to pacing itself. */
export class PacerUnreachable extends Error {}

export class RemoteTurns implements TurnSource {
  // Held connections are turns waiting; keep-alive saves a connection per request.
  private readonly agent = new Agent({ keepAlive: true });
  private readonly target: URL;
  private lastAnswer: TurnAnswer = { perMinute: 0, waiting: 0 };
  private pending = 0;

  constructor(private readonly address: PacerAddress) {
    this.target = new URL(TURN_PATH, address.url);
  }

  get perMinute(): number {
    return this.lastAnswer.perMinute;
  }

  /** This process's turns waiting, and the others' the pacer last counted. */
  get waiting(): number {
    return this.pending + this.lastAnswer.waiting;
  }

  async take(signal?: AbortSignal): Promise<void> {
    this.pending += 1;
    try {
      this.lastAnswer = await this.ask(signal);
    } finally {
      this.pending -= 1;
    }
  }

  /** Tells the pacer; should it not hear, the next refusal will. */
  refused(): void {
    const telling = request(new URL(REFUSED_PATH, this.address.url), {
      method: "POST",
      agent: this.agent,
      headers: { authorization: `Bearer ${this.address.token}`, "content-length": 0 },
    });
    telling.on("error", () => {});
    telling.on("response", (response) => response.resume());
    telling.end();
  }

  /** Closes the held connections (end of the process, or of a test). */
  close(): void {
    this.agent.destroy();
  }

  private ask(signal: AbortSignal | undefined): Promise<TurnAnswer> {
    return new Promise((resolve, reject) => {
      const asking = request(this.target, {
        method: "POST",
        agent: this.agent,
        headers: { authorization: `Bearer ${this.address.token}`, "content-length": 0 },
        ...(signal ? { signal } : {}),
      });
      const refuse = (why: string) => reject(new PacerUnreachable(`the pacer at ${this.address.url} ${why}`));
      asking.on("error", (error) => (signal?.aborted ? reject(signal.reason) : refuse(`failed: ${error.message}`)));
      asking.on("response", (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("error", (error) => refuse(`failed: ${error.message}`));
        response.on("end", () => {
          if (response.statusCode !== 200) return refuse(`answered ${response.statusCode}`);
          const answer = parseAnswer(Buffer.concat(chunks).toString("utf8"));
          if (answer === undefined) return refuse("answered something that is not a turn");
          resolve(answer);
        });
      });
      asking.end();
    });
  }
}

function parseAnswer(text: string): TurnAnswer | undefined {
  try {
    const value = JSON.parse(text) as Partial<TurnAnswer>;
    if (typeof value.perMinute !== "number" || typeof value.waiting !== "number") return undefined;
    return { perMinute: value.perMinute, waiting: value.waiting };
  } catch {
    return undefined;
  }
}
