import { setTimeout as sleep } from "node:timers/promises";
import { DmarcApiError, type DmarcClient, DmarcResponseError, OutcomeUnknownError } from "../client";
import type { CreateCandidate } from "./lifecycle";
import { plain } from "./values";

/**
 * How much the service's clock may run behind ours: an object the service
 * stamped up to this long before we sent the create can still be its result.
 */
const CLOCK_SKEW_ALLOWANCE_MS = 5_000;

/**
 * When this process started: the engine starts the provider for each run, so
 * an object the service made since then, less {@link CLOCK_SKEW_ALLOWANCE_MS},
 * was made during this run.
 */
export const PROCESS_STARTED_AT = Math.floor(performance.timeOrigin);

/** The earliest the candidate can have been made, from its own creation time or its organisation's; NaN when nothing dates it. */
export function madeNoEarlierThan(candidate: CreateCandidate): number {
  return Date.parse(candidate.createdAt ?? candidate.organizationCreatedAt ?? "");
}

/** Whether the service made the candidate at `since` or later, as far as its clock and ours can tell. */
export function madeSinceMoment(candidate: CreateCandidate, since: number): boolean {
  return madeNoEarlierThan(candidate) >= since - CLOCK_SKEW_ALLOWANCE_MS;
}

/** "org_1 (Acme Corp, created 2026-12-02T01:02:03Z)": a candidate as a person checks it on the service. */
function describeCandidate(candidate: CreateCandidate): string {
  const dated = candidate.createdAt ? `, created ${candidate.createdAt}` : "";
  return `${candidate.id} (${candidate.label}${dated})`;
}

/** A create whose answer was lost, where what it made cannot be told apart from other objects of its key: none is taken. */
export class AmbiguousCreateError extends Error {
  override readonly name = "AmbiguousCreateError";
  constructor(
    what: string,
    readonly candidates: readonly CreateCandidate[],
  ) {
    super(
      `${what}: the answer to its create was lost, and whether the create made any of these cannot be told: ${candidates.map(describeCandidate).join("; ")}. None was taken. Check them on the service: to keep the one this create made, declare importId with its id; delete any duplicate.`,
    );
  }
}

/**
 * What a create sent at `since` made, when its answer was lost: the one
 * candidate the service made since then; undefined when none was, so the
 * create is sent again. Two or more could each be it: the create fails
 * naming them rather than take one.
 */
export function madeSince(
  candidates: readonly CreateCandidate[],
  since: number,
  what: string,
): CreateCandidate | undefined {
  const made = candidates.filter((candidate) => madeSinceMoment(candidate, since));
  if (made.length > 1) throw new AmbiguousCreateError(what, made);
  return made[0];
}

/**
 * Sends a state-changing call whose answer may be lost, without ever doing
 * it twice. When the client reports that the outcome is unknown, `lookUp`
 * looks for what the call may have done: found, that is the result; not
 * found, the call provably did nothing and is sent again. On a flaky network
 * the repeat can go unanswered too, so this goes on for as many sends as the
 * client makes attempts (`maxAttempts`).
 *
 * A success status whose body cannot be read (cut off, not JSON, another
 * shape) says the call was carried out: its result is taken when `lookUp`
 * sees it, and the call is never sent again; otherwise the client's error
 * stands.
 */
export async function settleCall<T>(
  client: DmarcClient,
  send: () => Promise<T>,
  lookUp: () => Promise<T | undefined>,
): Promise<T> {
  for (let sends = 1; ; sends++) {
    try {
      return await send();
    } catch (error) {
      const doneButUnreadable = error instanceof DmarcResponseError && error.status >= 200 && error.status < 300;
      if (!doneButUnreadable && (!(error instanceof OutcomeUnknownError) || sends >= client.maxAttempts)) throw error;
      const existing = await lookUp();
      if (existing !== undefined) return existing;
      if (doneButUnreadable) throw error;
    }
  }
}

/** {@link settleCall} for a call that answers nothing: `tookEffect` tells whether a lost one was carried out. */
export async function settleAction(
  client: DmarcClient,
  send: () => Promise<unknown>,
  tookEffect: () => Promise<boolean>,
): Promise<void> {
  const done = Symbol("done");
  await settleCall<typeof done>(
    client,
    async () => {
      await send();
      return done;
    },
    async () => ((await tookEffect()) ? done : undefined),
  );
}

/** The first pause before a delete refused for what the object still holds is sent again; pauses double from it. */
const FIRST_FREED_PAUSE_MS = 500;
/** The longest pause between such sends: a few requests a minute against the service's 60. */
const MAX_FREED_PAUSE_MS = 5_000;

/**
 * Sends a delete the service refuses (409) while the object still holds
 * others, until it is carried out: the engine deletes what an object holds
 * at the same time as the object when the program names it by a literal id
 * (code `pulumi import` wrote), so the refusal lasts only until those deletes
 * land. The sends go on for as long as one of those deletes may itself keep
 * retrying (the client's `maxRetryElapsedMs`), pauses doubling up to 5 s;
 * then the error names what `holding` still finds and how long it waited.
 */
export async function deleteWhenFreed(
  client: DmarcClient,
  what: string,
  send: () => Promise<unknown>,
  holding: () => Promise<readonly string[]>,
): Promise<void> {
  const started = Date.now();
  for (let pause = FIRST_FREED_PAUSE_MS; ; pause = Math.min(2 * pause, MAX_FREED_PAUSE_MS)) {
    try {
      await send();
      return;
    } catch (error) {
      if (!(error instanceof DmarcApiError && error.status === 409)) throw error;
      const waitedMs = Date.now() - started;
      if (waitedMs + pause > client.maxRetryElapsedMs) {
        const held = await holding();
        throw new Error(
          `${what} still holds ${held.length > 0 ? held.join(", ") : "objects the service names above"} after waiting ${(waitedMs / 1000).toFixed(1)} s (maxRetryElapsedMs) for them to be deleted: delete or move them first, then run again.\n${error.message}`,
          { cause: error },
        );
      }
      await sleep(pause);
    }
  }
}

/**
 * The object exists, but a call made after its creation failed. The dynamic
 * provider server of @pulumi/pulumi reports an error carrying `id`,
 * `properties` and `reasons` as a resource that was created but failed to
 * initialise: the engine records it under that id, so the next `up` finishes
 * it with an update instead of creating it a second time (which would fail
 * as a duplicate, or make one).
 */
export class CreatedButUnfinished extends Error {
  override readonly name = "CreatedButUnfinished";
  readonly reasons: string[];

  constructor(
    readonly id: string,
    readonly properties: object,
    cause: unknown,
  ) {
    const message = `${cause instanceof Error ? cause.message : String(cause)}\nThe object was created as ${id}; the next \`pulumi up\` finishes it.`;
    super(message, { cause });
    // The engine shows the reasons, not the message, of a resource that failed to initialise.
    this.reasons = [message];
  }
}

/** Runs the calls that follow a create; if they fail, the object is still recorded (see {@link CreatedButUnfinished}). */
export async function finishCreate<T>(id: string, properties: object, finish: () => Promise<T>): Promise<T> {
  try {
    return await finish();
  } catch (error) {
    throw new CreatedButUnfinished(id, plain(properties), error);
  }
}
