import { type StateRow, withStateTable } from "../checkpoint/postgresBackend";
import { lockFrom, type StackLock } from "./locks";

// A PostgreSQL state backend's stack locks: rows of its state table, keyed
// by the path a file backend gives the lock file. A CI job cancelled mid-run
// leaves its row behind, and its rerun, on another runner, finds it only here.

/** Every lock of the project's stack in the backend's table. */
export function readPostgresLocks(backendUrl: string, projectName: string, stackName: string): Promise<StackLock[]> {
  const folder = `/.pulumi/locks/organization/${projectName}/${stackName}/`;
  return withStateTable(backendUrl, async (client, table) => {
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
  await withStateTable(backendUrl, async (client, table) => {
    await client.query(`DELETE FROM ${table} WHERE key = ANY($1)`, [locks.map((lock) => lock.file)]);
  });
}
