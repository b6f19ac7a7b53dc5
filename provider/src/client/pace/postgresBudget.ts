import type { Pool } from "pg";
import type { BudgetStore } from "./budgetStore";

// The budget of jobs on many machines (a CI matrix), in a PostgreSQL
// database they already share, most often the fleet's state backend: one
// row per partner holding when its next turn may start, moved by one atomic
// statement per request, on the database's clock so that the machines'
// clocks need not agree. A job that dies holds at most the one turn it
// booked last.

const TABLE = "dmarc_partner_budget";

const CREATE = `CREATE TABLE IF NOT EXISTS ${TABLE} (partner text PRIMARY KEY, next_turn timestamptz NOT NULL)`;

/** The turn is the later of now and the row's next turn; the row moves on by one interval; the answer is the wait. */
const BOOK = `
INSERT INTO ${TABLE} AS budget (partner, next_turn)
VALUES ($1, clock_timestamp() + make_interval(secs => $2::float8 / 1000))
ON CONFLICT (partner) DO UPDATE
  SET next_turn = greatest(budget.next_turn, clock_timestamp()) + make_interval(secs => $2::float8 / 1000)
RETURNING extract(epoch FROM (next_turn - clock_timestamp())) * 1000 - $2::float8 AS wait_ms`;

/** How long connecting or booking may take before the store counts as lost. */
const BOOKING_TIMEOUT_MS = 5_000;

/** The server, as lines may name it: host, port and database, never the user or password. */
function whereOf(url: URL): string {
  return `PostgreSQL at ${url.host}${url.pathname}`;
}

export class PostgresBudget implements BudgetStore {
  readonly kind = "postgres";
  readonly where: string;
  private pool: Promise<Pool> | undefined;

  constructor(
    private readonly url: string,
    private readonly partner: string,
  ) {
    this.where = whereOf(new URL(url));
  }

  async book(intervalMs: number): Promise<number> {
    const pool = await this.connected();
    try {
      const { rows } = await pool.query<{ wait_ms: number }>(BOOK, [this.partner, intervalMs]);
      return Math.max(0, Number(rows[0]?.wait_ms ?? 0));
    } catch (error) {
      // The next booking opens the store again, its table too: the server may be a new one (a failover).
      void this.close().catch(() => {});
      throw error;
    }
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    await (await pool?.catch(() => undefined))?.end();
  }

  private connected(): Promise<Pool> {
    this.pool ??= this.open().catch((error) => {
      this.pool = undefined;
      throw error;
    });
    return this.pool;
  }

  private async open(): Promise<Pool> {
    const { Pool } = await import("pg");
    const url = new URL(this.url);
    // Pulumi's own parameter for its state table; the server would refuse it.
    url.searchParams.delete("table");
    // One booking at a time per process: one connection is all it needs. A server out of reach fails a
    // booking within the timeouts rather than holding the process's turns (./bookedTurns.ts).
    const pool = new Pool({
      connectionString: url.toString(),
      max: 1,
      idleTimeoutMillis: 10_000,
      connectionTimeoutMillis: BOOKING_TIMEOUT_MS,
      query_timeout: BOOKING_TIMEOUT_MS,
      allowExitOnIdle: true,
    });
    pool.on("error", () => {});
    try {
      await pool.query(CREATE);
    } catch (error) {
      // Two jobs creating the table at once: the loser's error says it exists now.
      if ((error as { code?: string }).code !== "23505") {
        await pool.end();
        throw new Error(`${this.where}: ${(error as Error).message}`);
      }
    }
    return pool;
  }
}
