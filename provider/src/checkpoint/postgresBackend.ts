import { availableParallelism } from "node:os";
import { gunzipSync } from "node:zlib";
import type { Client } from "pg";
import { isPostgresUrl } from "../client";

// Pulumi's PostgreSQL state backend (3.246) opens at most twice GOMAXPROCS
// connections, while listing stacks reads up to ten of them at once
// (PULUMI_DIY_BACKEND_PARALLEL), each holding one connection and waiting for
// a second: on a 2-core runner a project of three stacks or more hangs in
// `pulumi stack ls` with every connection held. Reading no more stacks at
// once than half the pool leaves a connection free for each reader.

const PARALLEL = "PULUMI_DIY_BACKEND_PARALLEL";

/** What the `pulumi` CLI's environment needs for `backendUrl`: for a PostgreSQL backend, listings that cannot hang. */
export function stateBackendEnv(
  backendUrl: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  if (!isPostgresUrl(backendUrl) || env[PARALLEL]) return {};
  const procs = Number(env.GOMAXPROCS);
  return { [PARALLEL]: String(Number.isInteger(procs) && procs > 0 ? procs : availableParallelism()) };
}

// Pulumi's `diy` backend keeps each file a file backend would write as a row
// of its state table (`pulumi_state`, or the URL's `table`), keyed by the
// same path and holding the file's content base64-encoded: every stack's
// checkpoint is read here in one query, and recovery reads a dead run's lock
// rows through the same connection (recovery/postgresLocks.ts).

/** A row's value: the file's content, base64. */
export interface StateRow {
  key: string;
  data: { data?: string };
}

/** The state table and a connection string without Pulumi's own `table` parameter. */
function tableOf(backendUrl: string): { table: string; connectionString: string } {
  const url = new URL(backendUrl);
  const table = url.searchParams.get("table") ?? "pulumi_state";
  url.searchParams.delete("table");
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(table))
    throw new Error(`the state table's name "${table}" is not one this command reads`);
  return { table, connectionString: url.toString() };
}

export async function withStateTable<T>(
  backendUrl: string,
  work: (client: Client, table: string) => Promise<T>,
): Promise<T> {
  const { Client } = await import("pg");
  const { table, connectionString } = tableOf(backendUrl);
  const client = new Client({ connectionString });
  await client.connect();
  try {
    return await work(client, table);
  } finally {
    await client.end();
  }
}

/** Every stack's checkpoint in the backend's table, as `<project>/<stack>` (or `<stack>`) and the file's text. */
export function readPostgresCheckpoints(backendUrl: string): Promise<{ name: string; text: string }[]> {
  const marker = "/.pulumi/stacks/";
  return withStateTable(backendUrl, async (client, table) => {
    const { rows } = await client.query<StateRow>(
      `SELECT key, data FROM ${table} WHERE key LIKE '%' || $1 || '%' AND (key LIKE '%.json' OR key LIKE '%.json.gz')`,
      [marker],
    );
    return rows.map((row) => {
      const bytes = Buffer.from(row.data.data ?? "", "base64");
      const path = row.key.slice(row.key.indexOf(marker) + marker.length);
      return {
        name: path.replace(/\.json(\.gz)?$/, ""),
        text: (path.endsWith(".gz") ? gunzipSync(bytes) : bytes).toString("utf8"),
      };
    });
  });
}
