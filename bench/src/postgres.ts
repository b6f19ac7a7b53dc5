import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./loopback";
import { runProcess } from "./processes";

// A throwaway PostgreSQL server for the fleet's shared-backend test: Debian's
// packages (installed with apt-get when missing), a temporary data directory,
// a loopback port, trust authentication for one user, stopped and deleted afterwards.

const POSTGRES_ROOT = "/usr/lib/postgresql";
const USER = "pulumi";

export interface RunningPostgres {
  /** A Pulumi backend URL for the server's `postgres` database. */
  backendUrl: string;
  /** Runs one SQL statement; the rows, one line each, columns separated by `|`. */
  query(sql: string): Promise<string[]>;
  /** Stops the server at once, as a crash does (`pg_ctl stop -m immediate`), keeping its data. */
  halt(): Promise<void>;
  /** Starts a halted server again, on the same port with the same data. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

function binDir(): string | undefined {
  if (!existsSync(POSTGRES_ROOT)) return undefined;
  const versions = readdirSync(POSTGRES_ROOT)
    .filter((entry) => existsSync(join(POSTGRES_ROOT, entry, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(POSTGRES_ROOT, versions[0], "bin");
}

async function installedBinDir(): Promise<string> {
  const found = binDir();
  if (found) return found;
  await runProcess("apt-get", ["install", "-y", "--no-install-recommends", "postgresql"], {
    env: { DEBIAN_FRONTEND: "noninteractive" },
    timeoutMs: 600_000,
  });
  const installed = binDir();
  if (!installed) throw new Error(`apt-get installed postgresql, but no initdb is under ${POSTGRES_ROOT}`);
  return installed;
}

/** PostgreSQL refuses to run as root: as root, the server runs as Debian's `postgres` user. */
function asServerUser(command: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ["runuser", ["-u", "postgres", "--", command, ...args]] : [command, args];
}

export async function startPostgres(): Promise<RunningPostgres> {
  const bin = await installedBinDir();
  const dataDir = mkdtempSync(join(tmpdir(), "dmarc-fleet-pg-"));
  if (process.getuid?.() === 0) {
    const stdout = await runProcess("id", ["-u", "postgres"]);
    const group = await runProcess("id", ["-g", "postgres"]);
    chownSync(dataDir, Number(stdout.trim()), Number(group.trim()));
  }
  const port = await freePort();
  const exec = (command: string, args: string[]) => {
    const [file, argv] = asServerUser(join(bin, command), args);
    return runProcess(file, argv, { timeoutMs: 120_000 });
  };
  await exec("initdb", ["-D", join(dataDir, "data"), "-U", USER, "-A", "trust", "--no-sync"]);
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -k ${dataDir} -c fsync=off`;
  const start = () =>
    exec("pg_ctl", ["-D", join(dataDir, "data"), "-o", options, "-l", join(dataDir, "server.log"), "-w", "start"]);
  await start();
  return {
    backendUrl: `postgres://${USER}@127.0.0.1:${port}/postgres?sslmode=disable`,
    async query(sql) {
      const args = ["-h", "127.0.0.1", "-p", String(port), "-U", USER, "-d", "postgres", "-Atc", sql];
      const stdout = await runProcess(join(bin, "psql"), args, { timeoutMs: 60_000 });
      return stdout.split("\n").filter((line) => line !== "");
    },
    async halt() {
      await exec("pg_ctl", ["-D", join(dataDir, "data"), "-m", "immediate", "-w", "stop"]);
    },
    async restart() {
      await start();
    },
    async stop() {
      await exec("pg_ctl", ["-D", join(dataDir, "data"), "-m", "fast", "-w", "stop"]);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
