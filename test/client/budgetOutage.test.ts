import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  admittedShareOfLimit,
  budgetRun,
  type LimitedService,
  limitedService,
  serviceCounts,
} from "../support/budgetRuns";
import { type RunningPostgres, startPostgres } from "../support/postgres";
import { exited, type ProviderProcess, until } from "../support/providerProcess";

// A shared budget whose store goes away mid-run (a database restarted, a
// machine folder made unusable) must not turn into refusals: each run goes
// on at the share it had, tries the store again, and books in it again once
// it answers, saying so once each way. Three runs of one partner, each a
// process of its own, against a service that admits LIMIT requests a window
// and gives no hint of when to come back.

// Ten times the service's pace over a tenth of its window: the same share of the limit, in a tenth of the time.
const LIMIT = 60;
const WINDOW_SECONDS = 6;
const LIMIT_PER_MINUTE = (LIMIT * 60) / WINDOW_SECONDS;
const PACE = LIMIT_PER_MINUTE * 0.95;
const CALLS = 150;
/** The requests sent before the store goes away: the runs have booked a window's worth and more. */
const SENT_BEFORE_OUTAGE = 120;
/** The requests sent while the store is away: as many as the service's window holds, 20 s of 60 at the real pace. */
const SENT_DURING_OUTAGE = LIMIT / 3;
const LOST = /the budget at .* cannot be used \(.*\): pacing alone at [\d.]+ requests a minute/;
const REJOINED = /the budget at .* answers again: booking in it again/;

/** The lines of `output` that match `line`. */
const linesLike = (output: string, line: RegExp) => output.split("\n").filter((text) => line.test(text));

const services: LimitedService[] = [];
const runs: ProviderProcess[] = [];
let postgres: RunningPostgres | undefined;

afterEach(async () => {
  for (const { child } of runs.splice(0)) child.kill("SIGKILL");
  for (const { handle } of services.splice(0)) await handle.emulator.close();
});

afterAll(async () => {
  await postgres?.stop();
}, 120_000);

async function service(): Promise<LimitedService> {
  const started = await limitedService(LIMIT, WINDOW_SECONDS);
  services.push(started);
  return started;
}

function threeRuns(limited: LimitedService, store: string): ProviderProcess[] {
  const started = [0, 1, 2].map(() => budgetRun(limited, CALLS, PACE, { DMARC_BUDGET_STORE: store }));
  runs.push(...started);
  return started;
}

async function untilSent(limited: LimitedService, requests: number, what: string): Promise<void> {
  let sent = 0;
  await until(
    () => sent >= requests,
    what,
    120_000,
    async () => {
      sent = (await serviceCounts(limited)).requests;
    },
  );
}

/** Every run says it lost the store, and the service has had SENT_DURING_OUTAGE more requests since. */
async function untilOutageLasted(limited: LimitedService, started: readonly ProviderProcess[]): Promise<void> {
  const before = (await serviceCounts(limited)).requests;
  await until(() => started.every(({ output }) => LOST.test(output())), "every run to say it lost the store", 60_000);
  await untilSent(limited, before + SENT_DURING_OUTAGE, "the runs to go on alone");
}

interface Outcome {
  codes: (number | null)[];
  outputs: string[];
  refusedShare: number;
  limitShare: number;
}

async function outcomeOf(limited: LimitedService, started: readonly ProviderProcess[], name: string): Promise<Outcome> {
  const codes = await Promise.all(started.map(({ child }) => exited(child)));
  const outputs = started.map(({ output }) => output());
  const { requests, rateLimited } = await serviceCounts(limited);
  const limitShare = admittedShareOfLimit(limited.log, LIMIT_PER_MINUTE);
  console.log(
    `${name}: ${requests} requests, ${rateLimited} answered 429 (${((100 * rateLimited) / requests).toFixed(1)}%), ` +
      `${(100 * limitShare).toFixed(1)}% of the limit`,
  );
  return { codes, outputs, refusedShare: rateLimited / requests, limitShare };
}

/** Each run said once that it lost the store and once that it books in it again, naming it without credentials. */
function expectLostAndRejoinedOnce(outputs: readonly string[], where: string): void {
  for (const output of outputs) {
    expect(linesLike(output, LOST), output).toHaveLength(1);
    expect(linesLike(output, REJOINED), output).toHaveLength(1);
    expect(output).toContain(`the budget at ${where} answers again`);
  }
}

/** Three runs booking in a PostgreSQL budget, under way when its server stops at once. */
async function runsWhenPostgresStops() {
  postgres ??= await startPostgres();
  const limited = await service();
  const started = threeRuns(limited, postgres.backendUrl);
  await untilSent(limited, SENT_BEFORE_OUTAGE, "the runs to be under way");
  await postgres.halt();
  return { database: postgres, limited, started };
}

describe("jobs sharing a PostgreSQL budget whose server stops mid-run", () => {
  it("keep the share they had while it is down and book in it again once it is back", async () => {
    const { database, limited, started } = await runsWhenPostgresStops();
    await untilOutageLasted(limited, started);
    await database.restart();
    const { codes, outputs, refusedShare, limitShare } = await outcomeOf(limited, started, "postgres restarted");
    expect(codes, outputs.join("\n")).toEqual([0, 0, 0]);
    expect(refusedShare).toBeLessThanOrEqual(0.02);
    expect(limitShare).toBeGreaterThanOrEqual(0.85);
    const url = new URL(database.backendUrl);
    expectLostAndRejoinedOnce(outputs, `PostgreSQL at ${url.host}/postgres`);
    for (const output of outputs) expect(output).not.toContain(`${url.username}@`);
  }, 240_000);

  it("finish on their own spacing when it never comes back", async () => {
    const { database, limited, started } = await runsWhenPostgresStops();
    try {
      const { codes, outputs, refusedShare } = await outcomeOf(limited, started, "postgres gone");
      expect(codes, outputs.join("\n")).toEqual([0, 0, 0]);
      expect(refusedShare).toBeLessThanOrEqual(0.05);
      for (const output of outputs) {
        expect(linesLike(output, LOST), output).toHaveLength(1);
        expect(linesLike(output, REJOINED), output).toHaveLength(0);
      }
    } finally {
      await database.restart();
    }
  }, 240_000);
});

/** A file where the folder was, which no run can book in, as root too; a run may make the folder again meanwhile. */
function blockFolder(folder: string): void {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    rmSync(folder, { recursive: true, force: true });
    try {
      writeFileSync(folder, "", { flag: "wx" });
      return;
    } catch {}
  }
  throw new Error(`${folder} was made again at every one of 50 tries`);
}

describe("runs sharing this machine's budget whose folder becomes unusable mid-run", () => {
  it("keep the share they had and book in it again once it is usable", async () => {
    const folder = join(mkdtempSync(join(tmpdir(), "dmarc-budget-folder-")), "budget");
    const limited = await service();
    const started = threeRuns(limited, `machine:${folder}`);
    await untilSent(limited, SENT_BEFORE_OUTAGE, "the runs to be under way");
    blockFolder(folder);
    await untilOutageLasted(limited, started);
    rmSync(folder);
    mkdirSync(folder);
    const { codes, outputs, refusedShare, limitShare } = await outcomeOf(limited, started, "machine folder restored");
    expect(codes, outputs.join("\n")).toEqual([0, 0, 0]);
    expect(refusedShare).toBeLessThanOrEqual(0.02);
    expect(limitShare).toBeGreaterThanOrEqual(0.85);
    expectLostAndRejoinedOnce(outputs, folder);
  }, 240_000);
});
