// The fleet runner for Automation API users: `import { runFleet } from "pulumi-dmarc-partner/fleet"`.

export type { LeftOutOrganization } from "../discovery/entries";
export type { ImportedTenant, ImportReport, ManagedOrganization } from "../discovery/report";
export {
  type Interruption,
  type RecoveryTarget,
  recoverShard,
  type ShardRecoveryResult,
  type StackRecovery,
} from "../recovery/shard";
export { assignShards, DEFAULT_SHARD_SIZE, type Shard, shardName } from "./assignment";
export { FLEET_EXIT, FLEET_SPEC, main } from "./cli";
export { type ImportCommandOptions, ImportRefused, runImport } from "./import";
export type { ShardResult, ShardStatus, ShardTiming } from "./result";
export {
  FLEET_COMMANDS,
  type FleetCommand,
  type FleetOptions,
  type FleetReport,
  type FleetTiming,
  runFleet,
  type ShardOverview,
} from "./runner";
export type { FleetProject } from "./shard";
