// The fleet runner for Automation API users: `import { runFleet } from "pulumi-dmarc-partner/fleet"`.
export { assignShards, DEFAULT_SHARD_SIZE, type Shard, shardName } from "./assignment";
export { main } from "./cli";
export type { ShardResult, ShardStatus, ShardTiming } from "./progress";
export {
  type Interruption,
  type RecoveryOutcome,
  type RecoveryTarget,
  recoverShard,
  type StackRecovery,
} from "./recovery";
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
