import { availableParallelism } from "node:os";
import type { Writable } from "node:stream";
import type { StackRecovery } from "../recovery/shard";
import { type ProviderSettings, settingsFrom, withStateBackendBudget } from "../runtime/config";
import type { FleetScan } from "./plan/scan";
import type { FleetProject, ShardBackend } from "./shard/shard";

export type FleetCommand = "preview" | "up" | "refresh" | "drift" | "destroy" | "status" | "shards";
export const FLEET_COMMANDS: readonly FleetCommand[] = [
  "preview",
  "up",
  "refresh",
  "drift",
  "destroy",
  "status",
  "shards",
];

/** The commands that run an engine operation on shards; `status` and `shards` only read the backend. */
export type ShardOperation = Exclude<FleetCommand, "status" | "shards">;

export interface FleetOptions extends FleetProject {
  /** Stem of the shard stacks' names: `<fleet>-001`, `<fleet>-002`... */
  fleet: string;
  /** Tenants per new shard; default `DEFAULT_SHARD_SIZE`. Existing shards keep their tenants. */
  shardSize?: number;
  /** Shards run at once; default the machine's cores. */
  concurrency?: number;
  /** Run only these shards (stack names), e.g. one CI job's; the others are still read to place new tenants. */
  only?: readonly string[];
  /** `up` and `preview` run every shard, not only those whose tenants changed or that failed. */
  all?: boolean;
  /** `up` and `preview` refresh every existing shard first, so drift nobody looked for is healed too. */
  refresh?: boolean;
  /**
   * `drift` refreshes only the shards whose organisations the service's audit
   * log shows changed since the shard was last checked (or that were never
   * checked, or carry a drift mark); it sees only what the log files.
   */
  auditLog?: boolean;
  /** How far the service's clock may lag the runner's: the log is read from this long before the last check; default 60. */
  auditLogMarginSeconds?: number;
  /** Tenants whose offboarding this run approves, besides the inventory's tombstones. */
  allowOffboard?: readonly string[];
  /** Most offboardings one run may carry out; default `DEFAULT_MAX_OFFBOARD`. */
  maxOffboard?: number;
  /** Settles an interrupted shard before it runs again; without it such a shard fails with the command to run. */
  recover?: StackRecovery;
  /** Where progress goes; default stderr. */
  progress?: Writable & { isTTY?: boolean };
}

/**
 * The provider settings of the runner's own clients: the `dmarc:*` config,
 * else the environment; the budget shared in the fleet's state backend when
 * that is a PostgreSQL database and no other store is set.
 */
export function settingsOf(
  options: Pick<FleetOptions, "config"> & Partial<Pick<FleetOptions, "backendUrl" | "env">>,
): ProviderSettings {
  const backendUrl = options.backendUrl ?? options.env?.PULUMI_BACKEND_URL ?? process.env.PULUMI_BACKEND_URL;
  return withStateBackendBudget(
    settingsFrom((key) => options.config[key]?.value),
    backendUrl,
  );
}

// The options resolved once, at the command's edge, into the few values
// each part of the run takes (CONTRIBUTING.md, "Each function takes what it uses").

/** Shards run at once: the option, else the machine's cores. */
export function concurrencyOf({ concurrency }: Pick<FleetOptions, "concurrency">): number {
  return Math.max(1, concurrency ?? availableParallelism());
}

/** Where the shard stacks are, and only that: the configuration and the inventory stay behind. */
function backendOf(options: Pick<FleetOptions, keyof ShardBackend>): ShardBackend {
  const { projectName, projectDir, stateDir, backendUrl, secretsProvider, env } = options;
  return {
    projectName,
    projectDir,
    stateDir,
    env,
    ...(backendUrl ? { backendUrl } : {}),
    ...(secretsProvider ? { secretsProvider } : {}),
  };
}

/** What a scan of the fleet's shards reads, with the progress on stderr unless given. */
export function scanOf(options: Pick<FleetOptions, keyof ShardBackend | "fleet" | "recover" | "progress">): FleetScan {
  return {
    fleet: options.fleet,
    backend: backendOf(options),
    progress: options.progress ?? process.stderr,
    ...(options.recover ? { recover: options.recover } : {}),
  };
}
