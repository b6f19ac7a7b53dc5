import { availableParallelism } from "node:os";
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
