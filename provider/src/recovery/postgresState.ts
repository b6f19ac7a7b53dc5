import { gunzipSync } from "node:zlib";
import type { Client } from "pg";
import { lockFrom, type StackLock } from "./locks";

// A PostgreSQL state backend's rows: Pulumi's `diy` backend keeps each file
// a file backend would write as a row of its state table (`pulumi_state`, or
// the URL's `table`), keyed by the same path and holding the file's content
// base64-encoded. A CI job cancelled mid-run leaves its lock row behind, and
// its rerun, on another runner, finds it only here; the checkpoints of every
// stack are read here in one query.

/** A row's value: the file's content, base64. */
interface StateRow {
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

async function withClient<T>(backendUrl: string, work: (client: Client, table: string) => Promise<T>): Promise<T> {
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

/** Every lock of the project's stack in the backend's table. */
export function readPostgresLocks(backendUrl: string, projectName: string, stackName: string): Promise<StackLock[]> {
  const folder = `/.pulumi/locks/organization/${projectName}/${stackName}/`;
  return withClient(backendUrl, async (client, table) => {
    const { rows } = await client.query<StateRow>(
      `SELECT key, data FROM ${table} WHERE key LIKE '%' || $1 || '%' AND key LIKE '%.json'`,
      [folder],
    );
    return rows
      .filter((row) => row.key.slice(row.key.indexOf(folder) + folder.length).indexOf("/") < 0)
      .map((row) => lockFrom(row.key, Buffer.from(row.data.data ?? "", "base64").toString("utf8")));
  });
}

/** Removes lock rows; one already gone is fine. */
export async function removePostgresLocks(backendUrl: string, locks: readonly StackLock[]): Promise<void> {
  if (locks.length === 0) return;
  await withClient(backendUrl, async (client, table) => {
    await client.query(`DELETE FROM ${table} WHERE key = ANY($1)`, [locks.map((lock) => lock.file)]);
  });
}

/** Every stack's checkpoint in the backend's table, as `<project>/<stack>` (or `<stack>`) and the file's text. */
export function readPostgresCheckpoints(backendUrl: string): Promise<{ name: string; text: string }[]> {
  const marker = "/.pulumi/stacks/";
  return withClient(backendUrl, async (client, table) => {
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
